"""gunicorn, embedded: gthread workers serving ``make_app(conf)``."""

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
        return app.make_app(self.conf)
