# SPDX-License-Identifier: Apache-2.0
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
- ``refuse()`` and ``accept_again()``: the same, for a while (a database
  restarting, or failing over to another node at the same address).
- ``hold_replies()``: what the server sends is held while what the
  client sends goes through (a statement or a COMMIT reaches the
  database and runs, its answer does not come back); ``resume()``.
- ``when_sent(marker, action)``: ``action()`` runs once, the first time
  bytes the client sends match ``marker`` (a compiled bytes pattern: a
  COMMIT), before they go on:
  a ``refuse()`` there keeps them from the database, a
  ``hold_replies()`` lets them run unanswered.
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
        self._replies_flowing = threading.Event()
        self._replies_flowing.set()
        self._dropped = False
        self._lock = threading.Lock()
        self._sockets = []
        self._watched = None
        self._start_accepting()

    def _start_accepting(self):
        threading.Thread(target=self._accept, args=(self._listener,),
                         name='relay-accept', daemon=True).start()

    def stall(self):
        self._flowing.clear()

    def hold_replies(self):
        self._replies_flowing.clear()

    def resume(self):
        self._flowing.set()
        self._replies_flowing.set()

    def when_sent(self, marker, action):
        with self._lock:
            self._watched = (marker, action)

    def _action_for(self, data):
        """The watched action, taken, if ``data`` carries its marker."""
        with self._lock:
            if (self._watched is None
                    or self._watched[0].search(data) is None):
                return None
            action, self._watched = self._watched[1], None
            return action

    def refuse(self):
        """Refuse connections and reset the open ones until
        ``accept_again()``."""
        self._close_listener()
        self._reset_open_connections()

    def accept_again(self):
        # The same port: the server's URL names it.
        self._listener = socket.create_server(('127.0.0.1', self.port))
        self.resume()
        self._start_accepting()

    def cut(self):
        self._flowing.clear()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _close_now(sock)

    def drop(self):
        with self._lock:
            self._dropped = True
        self._close_listener()
        self._reset_open_connections()
        # Wakes the pumps held by a stall, which then see the drop.
        self._flowing.set()
        self._replies_flowing.set()

    def _close_listener(self):
        # Shut down first: a close alone leaves the socket listening
        # while the accepting thread is blocked on it.
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()

    def _reset_open_connections(self):
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _close_now(sock)

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # dropped or refusing
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
            for source, sink, gates, watched in (
                    (client, upstream, (self._flowing,), True),
                    (upstream, client,
                     (self._flowing, self._replies_flowing), False)):
                threading.Thread(target=self._pump,
                                 args=(source, sink, gates, watched),
                                 name='relay-pump', daemon=True).start()

    def _pump(self, source, sink, gates, watched):
        try:
            while self._may_flow(gates):
                data = source.recv(_CHUNK)
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                action = self._action_for(data) if watched else None
                if action is not None:
                    action()
                # Read while flowing, held here once stalled.
                if not self._may_flow(gates):
                    return
                sink.sendall(data)
        except OSError:  # closed by drop(), refuse(), or by either end
            return

    def _may_flow(self, gates):
        """Wait until bytes may go through every gate; False once
        dropped."""
        for gate in gates:
            while not gate.wait(_HOLD_POLL):
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
