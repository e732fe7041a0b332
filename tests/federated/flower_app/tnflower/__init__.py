"""tnflower: the test Flower App (digits MLP) of tests/test_federated_flower.py."""
