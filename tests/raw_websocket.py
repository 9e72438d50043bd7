"""A raw WebSocket client over a plain socket, for tests that send what no library would:
crafted (compressed) frames, many messages in one write, and replies never read."""

from __future__ import annotations

import base64
import os
import socket
import struct
import zlib

DEFLATE_OFFER = "permessage-deflate; client_max_window_bits=12; server_max_window_bits=12"
OP_TEXT, OP_CLOSE = 0x1, 0x8


class RawWebSocket:
    """One handshaken connection; frames are built and read by hand (RFC 6455)."""

    def __init__(self, port: int, path: str, deflate: bool = False, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if deflate:
            lines.append(f"Sec-WebSocket-Extensions: {DEFLATE_OFFER}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"handshake refused: {head!r}")
            head += chunk
        head, _, self.buffer = head.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1])
        self.deflated = b"permessage-deflate" in head.lower()
        self.compressor = zlib.compressobj(wbits=-12)

    @staticmethod
    def frame(payload: bytes, opcode: int = OP_TEXT, rsv1: bool = False, fin: bool = True) -> bytes:
        """A masked client frame (an all-zero mask: allowed, and the payload stays as is)."""
        first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", first, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", first, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", first, 0x80 | 127, size)
        return header + b"\0\0\0\0" + payload

    def compressed_frame(self, message: bytes) -> bytes:
        """A permessage-deflate text frame of `message` (context kept, as negotiated)."""
        data = self.compressor.compress(message) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
        return self.frame(data[:-4], rsv1=True)

    def send_text(self, text: str) -> None:
        self.sock.sendall(self.frame(text.encode()))

    def recv_frame(self) -> tuple[int, bytes]:
        """The next whole frame from the server: (opcode, payload), inflated if compressed."""
        while (parsed := self._parse()) is None:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            self.buffer += chunk
        return parsed

    def _parse(self) -> tuple[int, bytes] | None:
        """The frame at the front of the buffer, if it is all there (server frames are unmasked)."""
        if len(self.buffer) < 2:
            return None
        size, offset = self.buffer[1] & 0x7F, 2
        if size >= 126:
            offset = 4 if size == 126 else 10
            if len(self.buffer) < offset:
                return None
            size = int.from_bytes(self.buffer[2:offset], "big")
        if len(self.buffer) < offset + size:
            return None
        first, payload = self.buffer[0], self.buffer[offset : offset + size]
        self.buffer = self.buffer[offset + size :]
        return first & 0x0F, self._inflate(payload) if first & 0x40 else payload

    def _inflate(self, payload: bytes) -> bytes:
        decompressor = getattr(self, "_decompressor", None)
        if decompressor is None:
            decompressor = self._decompressor = zlib.decompressobj(wbits=-12)
        return decompressor.decompress(payload + b"\0\0\xff\xff")

    def close(self) -> None:
        self.sock.close()
