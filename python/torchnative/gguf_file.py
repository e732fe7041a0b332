"""A GGUF file read in place: header, metadata and tensor table parsed from a memory map,
tensor data handed out as uint8 tensors over the mapping (never copied).

The format (llama.cpp's gguf.md): magic "GGUF", version (2 or 3), tensor count, metadata
count; metadata entries (key, type, value); tensor entries (name, dims innermost first,
ggml type, offset into the data section); the data section starts at the next multiple
of `general.alignment` (default 32). Arrays of strings (the tokenizer's 49k tokens and
merges) are skipped without decoding unless asked for, which is what makes this fast:
gguf-py's GGUFReader decodes every element and takes seconds on this file.

Errors are ValueError naming the file (and the tensor or key) on one line: a truncated
file, a bad magic or version, a tensor whose data runs past the end of the file.
"""
import mmap
import os
import struct

import torch

# ggml type number -> (name, elements per block, bytes per block)
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 30: ("BF16", 1, 2),
}

# metadata value type -> struct format of a scalar (8 string, 9 array handled apart)
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFTensorInfo:
    """One tensor of the table: name, shape (outermost first, as torch orders it), ggml
    type, and the byte range of its data in the file."""
    __slots__ = ("name", "shape", "type", "offset", "nbytes")

    def __init__(self, name, shape, ggml_type, offset, nbytes):
        self.name, self.shape, self.type, self.offset, self.nbytes = name, shape, ggml_type, offset, nbytes

    @property
    def type_name(self):
        return GGML_TYPES.get(self.type, (f"type {self.type}",))[0]


class GGUFFile:
    """The parsed file. `metadata` maps keys to Python values (string arrays are left as
    ('array', element type, count, byte offset) unless listed in `decode_arrays`);
    `tensors` maps names to GGUFTensorInfo; `tensor_data(name)` gives the raw bytes as a
    uint8 tensor over the mapping, shaped (rows, row bytes) for 2-D tensors."""

    def __init__(self, path, decode_arrays=()):
        self.path = os.fspath(path)
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as e:
            raise ValueError(f"{self.path}: cannot open GGUF file: {e.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            if size < 24:
                raise ValueError(f"{self.path}: not a GGUF file (only {size} bytes)")
            # ACCESS_COPY: private pages, shared with the page cache until written (never);
            # a writable buffer, so torch.frombuffer borrows it without a warning
            self._mm = mmap.mmap(fd, 0, access=mmap.ACCESS_COPY)
        finally:
            os.close(fd)
        self.size = size
        self.metadata = {}
        self.tensors = {}
        try:
            self._parse(set(decode_arrays))
        except struct.error:
            raise ValueError(f"{self.path}: truncated GGUF file (header or metadata runs past its {size} bytes)") from None

    # -- parsing ---------------------------------------------------------------------
    def _read(self, fmt):
        v = struct.unpack_from(fmt, self._mm, self._pos)
        self._pos += struct.calcsize(fmt)
        return v[0]

    def _string(self):
        n = self._read("<Q")
        if self._pos + n > self.size:
            raise struct.error("string past the end")
        s = self._mm[self._pos:self._pos + n]
        self._pos += n
        return s.decode("utf-8", errors="replace")

    def _value(self, vtype, key, decode_arrays):
        if vtype in _SCALAR:
            return self._read(_SCALAR[vtype])
        if vtype == _STRING:
            return self._string()
        if vtype == _ARRAY:
            etype, count = self._read("<I"), self._read("<Q")
            start = self._pos
            if etype in _SCALAR:
                width = struct.calcsize(_SCALAR[etype])
                if self._pos + width * count > self.size:
                    raise struct.error("array past the end")
                if key in decode_arrays:
                    vals = list(struct.unpack_from(f"<{count}{_SCALAR[etype][1]}", self._mm, self._pos))
                    self._pos += width * count
                    return vals
                self._pos += width * count
                return ("array", etype, count, start)
            if etype == _STRING:
                if key in decode_arrays:
                    return [self._string() for _ in range(count)]
                for _ in range(count):  # skip: lengths only
                    n = self._read("<Q")
                    self._pos += n
                    if self._pos > self.size:
                        raise struct.error("string past the end")
                return ("array", etype, count, start)
            raise ValueError(f"{self.path}: metadata {key!r} is an array of unsupported type {etype}")
        raise ValueError(f"{self.path}: metadata {key!r} has unknown value type {vtype}")

    def _parse(self, decode_arrays):
        self._pos = 0
        if self._mm[:4] != b"GGUF":
            raise ValueError(f"{self.path}: not a GGUF file (magic {bytes(self._mm[:4])!r})")
        self._pos = 4
        version = self._read("<I")
        if version not in (2, 3):
            raise ValueError(f"{self.path}: unsupported GGUF version {version} (2 and 3 are read)")
        n_tensors, n_kv = self._read("<Q"), self._read("<Q")
        if n_tensors > self.size or n_kv > self.size:
            raise ValueError(f"{self.path}: corrupted GGUF header ({n_tensors} tensors, {n_kv} metadata entries)")
        for _ in range(n_kv):
            key = self._string()
            self.metadata[key] = self._value(self._read("<I"), key, decode_arrays)
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            ndim = self._read("<I")
            if ndim > 8:
                raise ValueError(f"{self.path}: tensor {name!r} has {ndim} dimensions (corrupted table)")
            dims = [self._read("<Q") for _ in range(ndim)]
            infos.append((name, dims, self._read("<I"), self._read("<Q")))
        align = self.metadata.get("general.alignment", 32)
        if not isinstance(align, int) or align <= 0:
            raise ValueError(f"{self.path}: bad general.alignment {align!r}")
        data_start = (self._pos + align - 1) // align * align
        for name, dims, gtype, off in infos:
            if gtype not in GGML_TYPES:
                raise ValueError(f"{self.path}: tensor {name!r} has unknown ggml type {gtype}")
            _, blk, bb = GGML_TYPES[gtype]
            n = 1
            for d in dims:
                n *= d
            if dims and dims[0] % blk:
                raise ValueError(f"{self.path}: tensor {name!r} rows of {dims[0]} are not whole {GGML_TYPES[gtype][0]} blocks")
            nbytes = n // blk * bb
            start = data_start + off
            if start + nbytes > self.size:
                raise ValueError(f"{self.path}: truncated GGUF file: tensor {name!r} needs bytes {start}..{start + nbytes} "
                                 f"but the file has {self.size}")
            self.tensors[name] = GGUFTensorInfo(name, tuple(reversed(dims)), gtype, start, nbytes)

    # -- access ----------------------------------------------------------------------
    def architecture(self):
        return self.metadata.get("general.architecture")

    def tensor_data(self, name):
        """The tensor's bytes as uint8 over the mapping: (rows, row bytes) when 2-D, flat
        otherwise. The tensor keeps the mapping alive."""
        info = self.tensors[name]
        t = torch.frombuffer(self._mm, dtype=torch.uint8, count=info.nbytes, offset=info.offset)
        if len(info.shape) == 2:
            t = t.view(info.shape[0], info.nbytes // max(info.shape[0], 1))
        return t

    def release(self, name):
        """Drops the resident pages that lie wholly inside the tensor's bytes (madvise
        MADV_DONTNEED), after a copy of them (a repack) replaced every use: the pages were
        never written (private, file-backed), so a later read faults the file's bytes in
        again; this only returns the memory the copy doubled."""
        info = self.tensors[name]
        page = mmap.PAGESIZE
        start = -(-info.offset // page) * page
        end = (info.offset + info.nbytes) // page * page
        if end > start and hasattr(self._mm, "madvise"):
            self._mm.madvise(mmap.MADV_DONTNEED, start, end - start)

    def tensor_f32(self, name):
        """An F32 tensor (norms) as float32 of its shape, copied out of the mapping."""
        info = self.tensors[name]
        if info.type != 0:
            raise ValueError(f"{self.path}: tensor {name!r} is {info.type_name}, expected F32")
        return self.tensor_data(name).view(torch.float32).reshape(info.shape).clone()
