"""A relay that keeps every byte it carries: what an eavesdropper on the hall's Wi-Fi reads
(tests/test_hall_tls.py's broker, tests/test_hall_page_tls.py's page)."""

import select
import socket
import threading


class Relay:
    """A TCP relay on 127.0.0.1:`port` to `target`: what an eavesdropper on the Wi-Fi reads, every
    byte of every connection both ways, kept in `seen`."""

    def __init__(self, target):
        self.target = target
        self.seen = bytearray()
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _pipe(self, one, other):
        ends = {one: other, other: one}
        try:
            while not self.closed:
                ready, _, _ = select.select(list(ends), [], [], 0.2)
                for end in ready:
                    data = end.recv(65536)
                    if not data:
                        return
                    with self.lock:
                        self.seen += data
                    ends[end].sendall(data)
        except OSError:
            return
        finally:
            one.close()
            other.close()

    def bytes(self):
        with self.lock:
            return bytes(self.seen)

    def close(self):
        self.closed = True
        self.server.close()
