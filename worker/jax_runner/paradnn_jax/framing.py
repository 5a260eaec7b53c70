"""Length-prefixed protobuf frames, the runner <-> worker wire format
(common/framing.h): a 4-byte little-endian payload length, then the
serialized message."""
import struct

# common/framing.h kMaxFrameBytes: 1 GiB + 16 MiB.
MAX_FRAME_BYTES = (1 << 30) + (16 << 20)


class FrameError(Exception):
    """A truncated, oversized or unparseable frame."""


def encode_frame(message):
    payload = message.SerializeToString()
    return struct.pack("<I", len(payload)) + payload


def write_frame(stream, message):
    """Writes one frame to a binary stream and flushes it."""
    stream.write(encode_frame(message))
    stream.flush()


def _read_fully(stream, size):
    chunks = []
    got = 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(stream, message):
    """Reads one frame from a binary stream into `message`. Returns False at a
    clean end of stream before any byte of a frame; raises FrameError for a
    truncated or oversized frame or bytes that do not parse."""
    header = _read_fully(stream, 4)
    if not header:
        return False
    if len(header) < 4:
        raise FrameError("truncated frame header")
    (length,) = struct.unpack("<I", header)
    if length > MAX_FRAME_BYTES:
        raise FrameError("frame of %d bytes exceeds the %d-byte limit" % (length, MAX_FRAME_BYTES))
    payload = _read_fully(stream, length)
    if len(payload) < length:
        raise FrameError("truncated frame payload")
    try:
        message.ParseFromString(payload)
    except Exception as e:  # google.protobuf.message.DecodeError
        raise FrameError("frame payload does not parse: %s" % e)
    return True


def split_frames(data):
    """All whole frames' payloads in `data` and the bytes left over."""
    payloads = []
    offset = 0
    while len(data) - offset >= 4:
        (length,) = struct.unpack_from("<I", data, offset)
        if length > MAX_FRAME_BYTES:
            raise FrameError("frame of %d bytes exceeds the limit" % length)
        if len(data) - offset - 4 < length:
            break
        payloads.append(data[offset + 4:offset + 4 + length])
        offset += 4 + length
    return payloads, data[offset:]
