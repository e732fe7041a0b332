"""The OpInfo sweep: upstream's operator database (op_db) run on our core and compared with
upstream torch on the same sample inputs (tests/test_opinfo.py drives it)."""
