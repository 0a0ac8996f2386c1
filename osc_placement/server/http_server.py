# SPDX-License-Identifier: Apache-2.0
"""The embedded HTTP servers: worker processes with threads, each serving
``make_app(conf)``.

granian (the default) parses HTTP in Rust and hands requests to a pool of
Python threads per worker; gunicorn's gthread workers do it all in Python,
which costs each request more server CPU.
"""

import contextlib
import functools
import gc
import logging
import os
import signal
import socket
import sys
import threading
import time

from osc_placement.server import conf as conf_mod

LOG = logging.getLogger(__name__)

# How long a stopping worker may finish its requests before it is killed.
GRACEFUL_SECONDS = 10
# How often a granian worker checks that its master is still there.
PARENT_CHECK_SECONDS = 1.0


def serve(conf):
    """Serve until stopped (SIGINT or SIGTERM); ``[server] http_server``
    picks the server."""
    _require_a_free_address(conf.server.host, conf.server.port)
    with _metrics_directory(conf):
        if conf.server.http_server == conf_mod.GUNICORN:
            _serve_gunicorn(conf)
        else:
            _serve_granian(conf)


@contextlib.contextmanager
def _metrics_directory(conf):
    """A private directory for the workers' metric files (prometheus_
    client's multi-process mode), made before any worker starts and
    removed when the server stops: its counters start from zero with the
    server, and no other server's files mix in. Set in the environment
    before prometheus_client is first imported, which reads it then;
    workers inherit it."""
    if not conf.metrics.enabled:
        yield
        return
    from osc_placement.server import metrics
    path = metrics.own_directory()
    master = os.getpid()
    try:
        yield
    finally:
        # gunicorn's workers are forked inside this block and leave it
        # too when they exit: only the master removes the directory.
        if os.getpid() == master:
            metrics.remove_directory(path)


def worker_app(conf):
    """The WSGI application of one worker process, built after the fork:
    its own engine and connection pool, and oslo.log set up again (a
    spawned worker does not inherit the master's handlers)."""
    # Imported here, in the worker: the master (and placement-server's
    # db commands, which import this module) never builds the application.
    from osc_placement.server import app
    conf_mod.setup_logging(conf)
    application = app.make_app(conf)
    _tune_gc()
    return application


def _tune_gc():
    """Freeze start-up objects and collect less often: the short-lived
    objects of candidate answers set off full scans of every object."""
    gc.freeze()
    gc.set_threshold(50000, 20, 100)


# A granian master that had been serving this long when its crash-loop
# guard ended it is started again: its workers died one after another
# after serving (an OOM killer that keeps firing), which must not stop the
# service. One that ends sooner is left to fail: the application cannot
# load, and starting it again would only loop.
RESTART_AFTER_SECONDS = 10


# How long a taken address is tried again before giving up, as gunicorn
# tries five times a second apart: the workers of a master that ended
# (granian's crash-loop restart re-executes this process) may still be
# closing the socket.
BIND_ATTEMPTS = 5
BIND_PAUSE_SECONDS = 1.0


def _require_a_free_address(host, port):
    """OSError if another process keeps listening on the address."""
    for attempt in range(BIND_ATTEMPTS):
        problem = address_in_use(host, port)
        if problem is None:
            return
        if attempt < BIND_ATTEMPTS - 1:
            time.sleep(BIND_PAUSE_SECONDS)
    raise OSError(problem)


def address_in_use(host, port):
    """The error text if another process listens on ``host``:``port``,
    else None.

    granian binds with SO_REUSEPORT, which on Linux lets a second server
    share a port a first listens on: two servers, maybe on two databases,
    answering in turn. A plain bind tells: SO_REUSEADDR lets it past
    connections left in TIME_WAIT, never past a listener."""
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return 'cannot listen on %s:%d: %s' % (host, port, exc.strerror)
    return None


def _serve_granian(conf):
    master = _granian(conf)
    stop_asked = _note_stop_signals(master)
    started = time.monotonic()
    try:
        master.serve(target_loader=functools.partial(
            _granian_worker_app, conf), wrap_loader=False)
    except SystemExit as exc:
        served = time.monotonic() - started
        # Asked to stop (its workers may still be counted as dying on the
        # way out), or too early to tell a crash loop from an application
        # that cannot load: end as granian ends.
        if stop_asked or not exc.code or served < RESTART_AFTER_SECONDS:
            raise
        LOG.error('granian stopped after its workers kept dying (%.0f s '
                  'after it started); starting the server again', served)
        _remove_metrics_directory()
        # A new process image under the same pid, so that a service
        # manager still sees it: no thread, handler or socket of the
        # master that ended survives.
        os.execv(sys.executable, sys.orig_argv)


def _remove_metrics_directory():
    """Before the process image is replaced: the new one makes its own
    directory, and no ``finally`` runs."""
    from osc_placement.server import metrics
    path = os.environ.get(metrics.MULTIPROC_ENV)
    if path:
        metrics.remove_directory(path)


def _note_stop_signals(master):
    """A list that gets an item when the master is told to stop (SIGTERM,
    SIGINT). granian installs the master's own handler as its signal
    handler when it starts, so wrapping it sees every stop; its own state
    cannot tell, as it marks a crash-loop exit as interrupted too."""
    asked = []
    handler = master.signal_handler_interrupt

    def stop(*args, **kwargs):
        asked.append(True)
        handler(*args, **kwargs)
    master.signal_handler_interrupt = stop
    return asked


def _granian(conf):
    """The granian master, not started yet."""
    from granian.constants import Interfaces
    from granian import Granian
    server = conf.server
    return Granian(
        # Named for the process title only: the loader passed to serve()
        # builds the application.
        target='osc_placement.server',
        address=server.host, port=server.port,
        interface=Interfaces.WSGI,
        workers=server.workers, blocking_threads=server.threads,
        # The application logs each request itself, as under gunicorn.
        log_access=False,
        log_level='debug' if conf.debug else 'warning',
        # Workers still busy this long after being told to stop are
        # killed, as gunicorn kills them past its graceful timeout.
        workers_kill_timeout=GRACEFUL_SECONDS,
        # A worker that dies (the OOM killer, a crash in a C extension)
        # is replaced, as gunicorn replaces it; without this granian's
        # master stops the other workers and exits. One dying again soon
        # after its start is taken for a crash loop and ends this
        # master: _serve_granian then starts the server again.
        respawn_failed_workers=True,
    )


def _granian_worker_app(conf):
    # A forked worker inherits the master's Python signal handlers, which
    # do nothing useful here, until granian installs its own after the
    # application is loaded: a SIGTERM meanwhile (a server stopped while
    # its workers still boot) would be swallowed and the worker would
    # never stop. Loading is safe to interrupt, so let it end the worker.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)
    _stop_with_parent(os.getppid())
    return worker_app(conf)


def _stop_with_parent(parent):
    """Stop this worker when its master is gone.

    granian's workers outlive a master that was killed outright (SIGKILL,
    the OOM killer), still serving on the listening socket, where
    gunicorn's workers notice and exit; a watcher thread gives granian's
    the same behaviour, stopping the worker the way its master would."""
    def watch():
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch, name='parent-watcher',
                     daemon=True).start()


def _serve_gunicorn(conf):
    # Imported here: a granian deployment need not have gunicorn.
    from gunicorn.app import base

    class PlacementServer(base.BaseApplication):

        def load_config(self):
            server = conf.server
            host = server.host
            bind = '[%s]:%d' % (host, server.port) if ':' in host \
                else '%s:%d' % (host, server.port)
            settings = {
                'bind': [bind],
                'workers': server.workers,
                'threads': server.threads,
                'worker_class': 'gthread',
                'graceful_timeout': GRACEFUL_SECONDS,
                'proc_name': 'placement-server',
            }
            if conf.metrics.enabled:
                settings['child_exit'] = _gunicorn_worker_exited
            # gunicorn >= 25 opens a control socket at a fixed per-user
            # path; several servers on one host would fight over it.
            if 'control_socket_disable' in self.cfg.settings:
                settings['control_socket_disable'] = True
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self):
            # Runs in each worker after fork.
            return worker_app(conf)

    PlacementServer().run()


def _gunicorn_worker_exited(server, worker):
    """gunicorn's child_exit hook: a dead worker's live gauges go."""
    from osc_placement.server import metrics
    metrics.mark_process_dead(worker.pid)
