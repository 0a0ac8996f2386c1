"""A TCP relay, in threads of the test process, between a server under
test and its database, that a test can turn into a database gone wrong:

- ``stall()``: connections stay open and new ones are accepted, but no
  byte goes through either way (packets vanishing on the way: a connect
  or a query hangs); ``resume()`` lets through what was held, as a
  network that heals delivers what TCP retransmits.
- ``cut()``: the open connections are closed and new ones stall (a
  database host that went away, its address now swallowing packets).
- ``drop()``: the port refuses connections and open ones are closed (a
  database that stopped).
"""

import socket
import struct
import threading

# How often a held pump looks whether the relay was dropped meanwhile.
_HOLD_POLL = 0.05
_CHUNK = 65536


class TcpRelay:

    def __init__(self, target_host, target_port):
        self._target = (target_host, target_port)
        self._listener = socket.create_server(('127.0.0.1', 0))
        self.port = self._listener.getsockname()[1]
        self._flowing = threading.Event()
        self._flowing.set()
        self._dropped = False
        self._lock = threading.Lock()
        self._sockets = []
        threading.Thread(target=self._accept, name='relay-accept',
                         daemon=True).start()

    def stall(self):
        self._flowing.clear()

    def resume(self):
        self._flowing.set()

    def cut(self):
        self._flowing.clear()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _close_now(sock)

    def drop(self):
        with self._lock:
            self._dropped = True
            sockets, self._sockets = self._sockets, []
        # Shut down first: a close alone leaves the socket listening
        # while the accepting thread is blocked on it.
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        for sock in sockets:
            _close_now(sock)
        # Wakes the pumps held by a stall, which then see the drop.
        self._flowing.set()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # dropped
                return
            try:
                upstream = socket.create_connection(self._target)
            except OSError:
                _close_now(client)
                continue
            with self._lock:
                if self._dropped:
                    _close_now(client)
                    _close_now(upstream)
                    return
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink),
                                 name='relay-pump', daemon=True).start()

    def _pump(self, source, sink):
        try:
            while self._may_flow():
                data = source.recv(_CHUNK)
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                # Read while flowing, held here once stalled.
                if not self._may_flow():
                    return
                sink.sendall(data)
        except OSError:  # closed by drop(), or by either end
            return

    def _may_flow(self):
        """Wait until bytes may go through; False once dropped."""
        while not self._flowing.wait(_HOLD_POLL):
            if self._dropped:
                return False
        return not self._dropped


def _close_now(sock):
    """Close with a reset, waking a thread blocked reading it."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack('ii', 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
