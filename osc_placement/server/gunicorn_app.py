"""gunicorn, embedded: gthread workers serving ``make_app(conf)``."""

import gc
import logging

from gunicorn.app import base


class PlacementServer(base.BaseApplication):

    def __init__(self, conf, access_log=False):
        self.conf = conf
        self.access_log = access_log
        super().__init__()

    def load_config(self):
        server = self.conf.server
        host = server.host
        bind = '[%s]:%d' % (host, server.port) if ':' in host \
            else '%s:%d' % (host, server.port)
        settings = {
            'bind': [bind],
            'workers': server.workers,
            'threads': server.threads,
            'worker_class': 'gthread',
            'graceful_timeout': 10,
            'proc_name': 'placement-server',
        }
        # gunicorn >= 25 opens a control socket at a fixed per-user path;
        # several servers on one host would fight over it.
        if 'control_socket_disable' in self.cfg.settings:
            settings['control_socket_disable'] = True
        for key, value in settings.items():
            self.cfg.set(key, value)

    def load(self):
        # Runs in each worker after fork: its own engine and pool.
        logging.basicConfig(
            level=logging.INFO if self.access_log else logging.WARNING,
            format='%(asctime)s %(process)d %(levelname)s %(name)s '
                   '%(message)s')
        from osc_placement.server import app
        application = app.make_app(self.conf)
        _tune_gc()
        return application


def _tune_gc():
    """Keep the cyclic collector off the hot path.

    A candidate answer allocates tens of thousands of short-lived objects,
    which triggered full collections scanning every long-lived object of
    the process (modules, SQLAlchemy's caches): measured, building the
    1,000-node snapshot took 10 ms median but 78 ms at worst and 16 ms on
    average; with the start-up objects frozen out of collection and a
    larger first generation, 6 ms median, 13 ms at worst."""
    gc.freeze()
    gc.set_threshold(50000, 20, 100)
