"""torch._C.PyTorchFileReader / PyTorchFileWriter: the zip container of torch.save/torch.load.

Byte-compatible with upstream's caffe2::serialize::PyTorchStreamWriter (miniz underneath):
every record is stored uncompressed under "<archive>/", its data starts on a multiple of
the storage alignment (64 by default) thanks to an "FB" extra field padded with 'Z', the
local header carries zero crc/sizes (bit 3 set, the real values follow in a data
descriptor), and the archive always ends with zip64 end records. torch.load(mmap=True)
depends on that layout: it maps the whole file and slices each storage at
get_record_offset(), so the offsets must be exact.

Pure Python over the standard library. Nothing here imports torch at module level (this
module is loaded while torch._C is being initialised); torch is looked up lazily.
"""

import ctypes
import os
import struct
import sys
import zlib

_U32_MAX = 0xFFFFFFFF
_LOCAL_HEADER_SIZE = 30
_LOCAL_SIG = 0x04034B50
_CENTRAL_SIG = 0x02014B50
_DESCRIPTOR_SIG = 0x08074B50
_EOCD_SIG = 0x06054B50
_ZIP64_EOCD_SIG = 0x06064B50
_ZIP64_LOCATOR_SIG = 0x07064B50
_FLAGS = 0x0808                  # bit 3: data descriptor follows; bit 11: UTF-8 names
_MIN_PRODUCED_VERSION = 3        # caffe2/serialize/versions.h kMinProducedFileFormatVersion
_MIN_SUPPORTED_VERSION = 1
_MAX_SUPPORTED_VERSION = 10
_SERIALIZATION_ID = ".data/serialization_id"
_CHUNK = 1 << 24

_CORRUPT_SUFFIX = (". This is an internal miniz error. If you are seeing this error, there is a "
                   "high likelihood that your checkpoint file is corrupted. This can happen if the "
                   "checkpoint was not saved properly, was transferred incorrectly, or the file was "
                   "modified after saving.")

_SCALAR_TYPE_NAMES = {
    "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "float32": "Float", "float64": "Double", "complex32": "ComplexHalf",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "bool": "Bool",
    "bfloat16": "BFloat16", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
}


def _torch():
    return sys.modules["torch"]


def _basename(name):
    """Upstream's archive name for a path: last component without its last extension."""
    start = max(name.rfind("/"), name.rfind("\\")) + 1
    if start >= len(name):
        return ""
    dot = name.rfind(".", start)
    return name[start:dot] if dot >= 0 else name[start:]


def _padding(cursor, filename_size, size, alignment):
    """Length of the 'FB' extra field (4-byte header + padding) that puts the data of a record
    whose local header starts at `cursor` on a multiple of `alignment`; zip64 extra fields,
    which miniz writes before it for large records or offsets, are counted in."""
    start = cursor + _LOCAL_HEADER_SIZE + filename_size + 4
    if size >= _U32_MAX or cursor >= _U32_MAX:
        start += 4
        if size >= _U32_MAX:
            start += 16
        if cursor >= _U32_MAX:
            start += 8
    mod = start % alignment
    return (0 if mod == 0 else alignment - mod) + 4


def _zip64_extra(size, offset, local=False):
    """The zip64 extended-information field miniz writes; in a local header the compressed
    size is still unknown (0) because the data descriptor carries it."""
    fields = b""
    if size >= _U32_MAX:
        fields += struct.pack("<QQ", size, 0 if local else size)
    if offset >= _U32_MAX:
        fields += struct.pack("<Q", offset)
    return struct.pack("<HH", 1, len(fields)) + fields if fields else b""


def _hash_combine(seed, value):
    """c10::hash_combine on 64-bit size_t."""
    m = 0xFFFFFFFFFFFFFFFF
    return (seed ^ ((value + 0x9E3779B9 + ((seed << 6) & m) + (seed >> 2)) & m)) & m


def _fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _raw_buffer(address, size):
    """A writable buffer over `size` bytes at `address` (no copy)."""
    if size == 0:
        return b""
    return (ctypes.c_char * size).from_address(address)


class PyTorchFileWriter:
    """Writes a PyTorch zip archive to a path or to an object with write()."""

    def __init__(self, file_name, compute_crc32=True, storage_alignment=64):
        self._file = None
        self._own_file = False
        self._finalized = True           # until setup succeeds, never finalize in __del__
        if isinstance(file_name, str):
            self._archive_name = _basename(file_name)
            if not self._archive_name:
                raise RuntimeError(f"invalid file name: {file_name}")
            parent = file_name[:file_name.rfind("/")] if "/" in file_name else ""
            if parent and not os.path.isdir(parent):
                raise RuntimeError(f"Parent directory {parent} does not exist.")
            try:
                self._file = open(file_name, "wb")
            except OSError:
                raise RuntimeError(f"File {file_name} cannot be opened.") from None
            self._own_file = True
        elif callable(getattr(file_name, "write", None)):
            self._archive_name = "archive"
            self._file = file_name
        else:
            raise NotImplementedError(
                "torch._C.PyTorchFileWriter(writer_func) is not implemented by torchnative; "
                "pass a file name or an object with write()")
        self._crc = bool(compute_crc32)
        self._alignment = int(storage_alignment)
        if self._alignment <= 0:
            raise RuntimeError(f"storage alignment must be positive, got {self._alignment}")
        self._pos = 0
        self._entries = []               # (full_name bytes, crc, size, local header offset)
        self._written = []               # record names in write order
        self._written_set = set()
        self._version = _MIN_PRODUCED_VERSION
        self._combined_crc = 0
        self._serialization_id = ""
        self._finalized = False

    def _emit(self, data):
        n = len(data) if not isinstance(data, memoryview) else data.nbytes
        if n == 0:
            return
        ret = self._file.write(data)
        if ret is not None and ret != n:
            raise RuntimeError("PytorchStreamWriter failed writing file.")
        self._pos += n

    def _check_open(self):
        if self._finalized:
            raise RuntimeError("!finalized_ INTERNAL ASSERT FAILED: the archive was already "
                               "finalized by write_end_of_file()")

    def _write(self, name, payload, size):
        """Append one record; `payload` is a buffer of exactly `size` bytes, or None for
        `size` zero bytes (write_record_metadata)."""
        self._check_open()
        if name in self._written_set:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        full = (self._archive_name + "/" + name).encode("utf-8")
        cursor = self._pos
        extra = _zip64_extra(size, cursor, local=True)
        pad = _padding(cursor, len(full), size, self._alignment)
        fb = b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4)
        header = struct.pack("<IHHHHHIIIHH", _LOCAL_SIG, 0, _FLAGS, 0, 0, 0, 0, 0, 0,
                             len(full), len(extra) + len(fb))
        self._emit(header + full + extra + fb)
        crc = 0
        if payload is None and self._own_file:
            # Upstream seeks over the data (a hole in the file) and records crc 0.
            self._file.seek(size, os.SEEK_CUR)
            self._pos += size
        elif payload is None:
            zeros = bytes(min(size, _CHUNK))
            left = size
            while left:
                piece = zeros if left >= len(zeros) else zeros[:left]
                self._emit(piece)
                left -= len(piece)
        else:
            if self._crc:
                crc = zlib.crc32(payload)
            self._emit(payload)
        if size >= _U32_MAX or cursor >= _U32_MAX:
            desc = struct.pack("<IIQQ", _DESCRIPTOR_SIG, crc, size, size)
        else:
            desc = struct.pack("<IIII", _DESCRIPTOR_SIG, crc, size, size)
        self._emit(desc)
        self._combined_crc = _hash_combine(self._combined_crc, crc)
        self._entries.append((full, crc, size, cursor))
        self._written.append(name)
        self._written_set.add(name)

    def write_record(self, name, data, size):
        """Store `size` bytes of `data` (str, bytes-like, storage, or a data address as int)
        as record `name`."""
        size = int(size)
        if size < 0:
            raise ValueError(f"write_record: negative size {size}")
        if name == _SERIALIZATION_ID and not self._serialization_id:
            # Upstream skips a copied-in serialization id: each output gets its own.
            return
        if isinstance(data, str):
            data = data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview)):
            view = memoryview(data).cast("B")
            if view.nbytes < size:
                raise RuntimeError(f"write_record: record {name} has {view.nbytes} bytes, "
                                   f"fewer than the {size} requested")
            payload = view[:size]
        elif isinstance(data, int):
            payload = _raw_buffer(data, size)
        elif hasattr(data, "data_ptr") and hasattr(data, "nbytes"):
            if data.device.type != "cpu":
                raise RuntimeError(f"write_record: storage for {name} must be on the CPU, "
                                   f"got {data.device}")
            if data.nbytes() < size:
                raise RuntimeError(f"write_record: storage for {name} has {data.nbytes()} "
                                   f"bytes, fewer than the {size} requested")
            payload = _raw_buffer(data.data_ptr(), size)
        else:
            raise TypeError("write_record(): incompatible function arguments; data must be "
                            f"str, bytes, a storage or an int, got {type(data).__name__}")
        self._write(name, payload, size)

    def write_record_metadata(self, name, size):
        """Write the header of record `name` and `size` zero bytes in place of its data (used
        by torch.serialization.skip_data)."""
        self._write(name, None, int(size))

    def _write_serialization_id(self):
        if _SERIALIZATION_ID in self._written_set:
            return
        # Upstream: 20 digits of a hash over the record names, 20 of the crc32s combined in
        # write order. Its name hash is libstdc++'s std::hash over an unordered_set (not
        # reproducible); this uses FNV-1a over the sorted names, equally deterministic.
        names_hash = 0
        for n in sorted(self._written_set):
            names_hash = _hash_combine(names_hash, _fnv1a64(n.encode("utf-8")))
        self._serialization_id = f"{names_hash:020d}{self._combined_crc:020d}"
        sid = self._serialization_id.encode("ascii")
        self._write(_SERIALIZATION_ID, sid, len(sid))

    def write_end_of_file(self):
        """Write version, byteorder and serialization id records (unless present) and the
        central directory; closes the file when this writer opened it."""
        self._check_open()
        try:
            if ".data/version" not in self._written_set and "version" not in self._written_set:
                v = f"{self._version}\n".encode("ascii")
                self._write(".data/version" if self._version >= 6 else "version", v, len(v))
            if "byteorder" not in self._written_set:
                b = sys.byteorder.encode("ascii")
                self._write("byteorder", b, len(b))
            self._write_serialization_id()
            self._finalized = True
            cd_offset = self._pos
            parts = []
            for full, crc, size, ofs in self._entries:
                extra = _zip64_extra(size, ofs)
                parts.append(struct.pack("<IHHHHHHIIIHHHHHII", _CENTRAL_SIG, 0, 0, _FLAGS, 0, 0, 0,
                                         crc, min(size, _U32_MAX), min(size, _U32_MAX), len(full),
                                         len(extra), 0, 0, 0, 0, min(ofs, _U32_MAX)))
                parts.append(full)
                parts.append(extra)
            cd = b"".join(parts)
            self._emit(cd)
            n = len(self._entries)
            zip64_ofs = self._pos
            tail = struct.pack("<IQHHIIQQQQ", _ZIP64_EOCD_SIG, 44, 0x031E, 0x002D, 0, 0, n, n,
                               len(cd), cd_offset)
            tail += struct.pack("<IIQI", _ZIP64_LOCATOR_SIG, 0, zip64_ofs, 1)
            tail += struct.pack("<IHHHHIIH", _EOCD_SIG, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                min(len(cd), _U32_MAX), min(cd_offset, _U32_MAX), 0)
            self._emit(tail)
            flush = getattr(self._file, "flush", None)
            if flush is not None:
                flush()
        finally:
            self._finalized = True
            if self._own_file:
                self._file.close()
                self._own_file = False

    def set_min_version(self, version):
        """Raise the format version written at end of file to at least `version`."""
        self._version = max(int(version), self._version)

    def get_all_written_records(self):
        """Names of the records written so far (a set, as upstream)."""
        return set(self._written_set)

    def archive_name(self):
        """The top-level folder every record is stored under."""
        return self._archive_name

    def serialization_id(self):
        """The id written by write_end_of_file ("" before it)."""
        return self._serialization_id

    def __del__(self):
        # Upstream's destructor finalizes an unfinished archive.
        try:
            if not self._finalized:
                self.write_end_of_file()
        except Exception:
            pass


class PyTorchFileReader:
    """Reads a PyTorch zip archive from a path or a seekable object with read()."""

    def __init__(self, name_or_buffer):
        self._own_file = False
        if isinstance(name_or_buffer, str):
            try:
                self._file = open(name_or_buffer, "rb")
            except OSError as e:
                raise RuntimeError(f"open file failed because of errno {e.errno} on fopen: "
                                   f"{e.strerror}, file path: {name_or_buffer}") from None
            self._own_file = True
            self._start = 0
        else:
            self._file = name_or_buffer
            self._start = name_or_buffer.tell()
        self._file.seek(0, 2)
        self._size = self._file.tell() - self._start
        if self._size > 8 and self._read(0, 8) == b"PYTORCH1":
            raise RuntimeError("File is an unsupported archive format from the preview release.")
        self._records = {}           # full name -> (method, compressed size, size, header ofs)
        self._order = []
        try:
            self._parse_central_directory()
        except (struct.error, UnicodeDecodeError, ValueError, OverflowError, MemoryError):
            # a corrupt directory that decodes to nonsense: miniz's one answer for it
            self._fail("reading zip archive: invalid header or archive is corrupted")
        if not self._order:
            raise RuntimeError("archive does not contain any files")
        first = self._order[0]
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self._prefix = first[:first.index("/") + 1]
        self._serialization_id = ""
        if self.has_record(_SERIALIZATION_ID):
            self._serialization_id = self.get_record(_SERIALIZATION_ID).decode("utf-8", "replace")
        if self.has_record(".data/version"):
            vtext = self.get_record(".data/version")
        elif self.has_record("version"):
            vtext = self.get_record("version")
        else:
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
        try:
            version = int(vtext.decode("ascii").strip())
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {vtext.decode('latin-1')} as "
                               "Long Long.") from None
        if version < _MIN_SUPPORTED_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the minimum "
                f"supported version for reading is {_MIN_SUPPORTED_VERSION}. Your PyTorch script "
                "module file is too old. Please regenerate it with latest version of PyTorch to "
                "mitigate this issue.")
        if version > _MAX_SUPPORTED_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the maximum "
                f"supported version for reading is {_MAX_SUPPORTED_VERSION}. The version of your "
                "PyTorch installation may be too old, please upgrade PyTorch to latest version "
                "to mitigate this issue.")
        self._version = version

    # -- low level -------------------------------------------------------------------------

    def _read(self, pos, n):
        self._file.seek(self._start + pos)
        data = self._file.read(n)
        if len(data) != n:
            raise RuntimeError("PytorchStreamReader failed reading file: unexpected end of file"
                               + _CORRUPT_SUFFIX)
        return data

    def _fail(self, what):
        raise RuntimeError(f"PytorchStreamReader failed {what}{_CORRUPT_SUFFIX}")

    def _parse_central_directory(self):
        tail_len = min(self._size, 22 + 0xFFFF)
        if tail_len < 22:
            self._fail("reading zip archive: not a ZIP archive")
        tail = self._read(self._size - tail_len, tail_len)
        at = tail.rfind(b"PK\x05\x06")
        while at >= 0 and len(tail) - at < 22:
            at = tail.rfind(b"PK\x05\x06", 0, at)
        if at < 0:
            self._fail("reading zip archive: failed finding central directory")
        eocd_pos = self._size - tail_len + at
        (_, disk, cd_disk, on_disk, count, cd_size, cd_ofs, _) = struct.unpack("<IHHHHIIH", tail[at:at + 22])
        if eocd_pos >= 20:
            loc = self._read(eocd_pos - 20, 20)
            sig, _, z64_ofs, _ = struct.unpack("<IIQI", loc)
            if sig == _ZIP64_LOCATOR_SIG:
                rec = self._read(z64_ofs, 56)
                if struct.unpack("<I", rec[:4])[0] != _ZIP64_EOCD_SIG:
                    self._fail("reading zip archive: invalid header or archive is corrupted")
                (_, _, _, _, disk, cd_disk, on_disk, count, cd_size, cd_ofs) = struct.unpack("<IQHHIIQQQQ", rec)
        # miniz's checks of the end record (mz_zip_reader_read_central_dir)
        if on_disk != count or (disk | cd_disk) not in (0, 1) and (disk, cd_disk) != (0xFFFF, 0xFFFF):
            self._fail("reading zip archive: unsupported multidisk archive")
        if cd_size < count * 46 or cd_ofs + cd_size > self._size:
            self._fail("reading zip archive: invalid header or archive is corrupted")
        cd = self._read(cd_ofs, cd_size)
        p = 0
        for _ in range(count):
            if p + 46 > len(cd) or struct.unpack_from("<I", cd, p)[0] != _CENTRAL_SIG:
                self._fail("reading zip archive: invalid header or archive is corrupted")
            (_, _, _, flags, method, _, _, crc, csize, usize, nlen, xlen, clen, _, _, _,
             ofs) = struct.unpack_from("<IHHHHHHIIIHHHHHII", cd, p)
            raw_name = cd[p + 46:p + 46 + nlen]
            extra = cd[p + 46 + nlen:p + 46 + nlen + xlen]
            q = 0
            while q + 4 <= len(extra):
                hid, hlen = struct.unpack_from("<HH", extra, q)
                if hid == 1:
                    fields = extra[q + 4:q + 4 + hlen]
                    k = 0
                    if usize == _U32_MAX:
                        usize = struct.unpack_from("<Q", fields, k)[0]
                        k += 8
                    if csize == _U32_MAX:
                        csize = struct.unpack_from("<Q", fields, k)[0]
                        k += 8
                    if ofs == _U32_MAX:
                        ofs = struct.unpack_from("<Q", fields, k)[0]
                        k += 8
                q += 4 + hlen
            name = raw_name.decode("utf-8" if flags & 0x800 else "cp437")
            if name not in self._records:
                self._records[name] = (method, csize, usize, ofs)
            self._order.append(name)
            p += 46 + nlen + xlen + clen

    def _locate(self, name):
        rec = self._records.get(self._prefix + name)
        if rec is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found"
                               + _CORRUPT_SUFFIX)
        return rec

    def _data_offset(self, header_ofs):
        head = self._read(header_ofs, _LOCAL_HEADER_SIZE)
        if struct.unpack_from("<I", head)[0] != _LOCAL_SIG:
            self._fail("reading file: invalid local header")
        nlen, xlen = struct.unpack_from("<HH", head, 26)
        return header_ofs + _LOCAL_HEADER_SIZE + nlen + xlen

    def _read_into(self, name, address, nbytes):
        """Copy record `name` (exactly nbytes long) into memory at `address`."""
        method, csize, usize, ofs = self._locate(name)
        if nbytes == 0:
            return
        data_ofs = self._data_offset(ofs)
        if method == 0:
            self._file.seek(self._start + data_ofs)
            view = memoryview(_raw_buffer(address, nbytes)).cast("B")
            done = 0
            readinto = getattr(self._file, "readinto", None)
            while done < nbytes:
                step = min(_CHUNK, nbytes - done)
                if readinto is not None:
                    got = readinto(view[done:done + step])
                else:
                    chunk = self._file.read(step)
                    got = len(chunk)
                    view[done:done + got] = chunk
                if not got:
                    self._fail(f"reading file {name}: unexpected end of file")
                done += got
        else:
            data = self._extract(name)
            ctypes.memmove(address, data, nbytes)

    def _extract(self, name):
        method, csize, usize, ofs = self._locate(name)
        data_ofs = self._data_offset(ofs)
        if method == 0:
            return self._read(data_ofs, usize)
        if method == 8:
            data = zlib.decompress(self._read(data_ofs, csize), -15)
            if len(data) != usize:
                self._fail(f"reading file {name}: decompression failed")
            return data
        self._fail(f"reading file {name}: unsupported compression method {method}")

    # -- the upstream methods --------------------------------------------------------------

    def get_record(self, name):
        """The bytes of record `name`."""
        try:
            return self._extract(name)
        except (struct.error, zlib.error, ValueError, OverflowError, MemoryError):
            self._fail(f"reading file {name}: invalid header or archive is corrupted")

    def has_record(self, name):
        """Whether record `name` exists."""
        return (self._prefix + name) in self._records

    def get_all_records(self):
        """Every record name (without the archive folder), in archive order."""
        out = []
        for full in self._order:
            if not full.startswith(self._prefix):
                raise RuntimeError(f"file in archive is not in a subdirectory {self._prefix}: "
                                   f"{full}")
            out.append(full[len(self._prefix):])
        return out

    def get_record_size(self, name):
        """Uncompressed size in bytes of record `name`."""
        return self._locate(name)[2]

    def get_record_offset(self, name):
        """Offset of record `name`'s data from the start of the archive."""
        return self._data_offset(self._locate(name)[3])

    def get_record_header_offset(self, name):
        """Offset of record `name`'s local header from the start of the archive."""
        return self._locate(name)[3]

    def get_record_offset_no_read(self, cursor, name, size, alignment):
        """Offset the data of a record written by upstream's writer would have, given that
        its local header starts at `cursor`; reads nothing."""
        cursor, size, alignment = int(cursor), int(size), int(alignment)
        full = len((self._prefix + name).encode("utf-8"))
        z64 = 0
        if size >= _U32_MAX or cursor >= _U32_MAX:
            z64 = 4 + (16 if size >= _U32_MAX else 0) + (8 if cursor >= _U32_MAX else 0)
        return cursor + _LOCAL_HEADER_SIZE + full + z64 + _padding(cursor, full, size, alignment)

    def get_storage_from_record(self, name, numel, dtype):
        """A CPU tensor of shape (0,) whose storage holds record `name` (numel elements of
        `dtype`; anything that is not a dtype means bytes)."""
        torch = _torch()
        if not isinstance(dtype, torch.dtype):
            dtype = torch.uint8
        numel = int(numel)
        itemsize = torch.empty((), dtype=dtype).element_size()
        nbytes = numel * itemsize
        size = self.get_record_size(name)
        if size != nbytes:
            tname = _SCALAR_TYPE_NAMES.get(str(dtype).replace("torch.", ""), str(dtype))
            raise RuntimeError(f"record size ({size} bytes) does not match expected size "
                               f"({nbytes} bytes = {numel} elements * {itemsize} bytes/element) "
                               f"for dtype {tname}")
        full = torch.empty((numel,), dtype=dtype)
        if nbytes:
            self._read_into(name, full.data_ptr(), nbytes)
        return full[:0]

    def serialization_id(self):
        """The id stored in .data/serialization_id ("" when absent)."""
        return self._serialization_id

    def __del__(self):
        try:
            if self._own_file:
                self._file.close()
        except Exception:
            pass
