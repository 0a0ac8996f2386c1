"""A server worker's log lines, written by a thread of their own.

oslo.log formats every line it writes with the request's context (ids,
user and project), the time in ISO form and the configured format
strings. For the one line a request logs, that cost a worker of the
embedded server 0.25-0.3 ms of CPU on a 2-core machine whenever its caches
had gone cold, the usual state between a scheduler's requests: a tenth
of a ``member_of`` candidate request, and more than the database round
trip it makes. With ``write_from_a_thread`` a request only queues its
record; the writer thread formats and writes it once the request's
thread lets go of the interpreter, mostly while the response is on its
way.

The lines are the same, in the same order, with the time they were
logged at and the context of the request that logged them. Those still
queued when the process ends are written first, whether it ends through
``sys.exit`` (gunicorn's workers) or ``multiprocessing`` (granian's,
which skips ``atexit``).
"""

import atexit
import logging
import logging.handlers
import multiprocessing.util
import queue
import threading

from oslo_context import context


class _QueuedAsLogged(logging.handlers.QueueHandler):
    """Queues a record as it is, with what must be read when it is
    logged rather than when it is written."""

    def prepare(self, record):
        # oslo.log's formatter takes the context from the record, else
        # from the thread formatting it, and the writer's has none.
        if 'context' not in record.__dict__:
            record.context = context.get_current()
        # The arguments may change before the line is written.
        record.msg = record.getMessage()
        record.args = None
        return record


def write_from_a_thread():
    """Move the root logger's handlers behind a queue that a thread of
    this process empties; returns the function that stops the thread
    (and puts the handlers back), run when the process exits."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    records = queue.SimpleQueue()
    listener = logging.handlers.QueueListener(
        records, *handlers, respect_handler_level=True)
    queued = _QueuedAsLogged(records)
    for handler in handlers:
        root.removeHandler(handler)
    root.addHandler(queued)
    listener.start()
    stop = _Stop(listener, root, queued, handlers)
    atexit.register(stop)
    multiprocessing.util.Finalize(None, stop, exitpriority=0)
    return stop


class _Stop:
    """Write what is queued, end the thread and log directly again;
    once, whoever calls first."""

    def __init__(self, listener, root, queued, handlers):
        self._listener, self._root = listener, root
        self._queued, self._handlers = queued, handlers
        self._lock = threading.Lock()
        self._done = False

    def __call__(self):
        with self._lock:
            if self._done:
                return
            self._done = True
        self._listener.stop()
        self._root.removeHandler(self._queued)
        for handler in self._handlers:
            self._root.addHandler(handler)
