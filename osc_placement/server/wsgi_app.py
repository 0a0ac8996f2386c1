# SPDX-License-Identifier: Apache-2.0
"""WSGI entry point for uWSGI, mod_wsgi, gunicorn...: ``application``.

Configured as upstream's ``placement.wsgi.api``: ``placement.conf`` in
``$OS_PLACEMENT_CONFIG_DIR``, or in oslo.config's default locations
(``/etc/placement/placement.conf``...) when that is unset; upstream's
defaults (keystone auth, a required ``[placement_database] connection``:
without one the application fails to load and the WSGI server's log says
why). oslo.log is set up from the same file.

    uwsgi --http-socket :8778 --module osc_placement.server.wsgi_app
    gunicorn osc_placement.server.wsgi_app:application

The application is built when this module is first imported, once per
worker process (after the fork when the server preloads nothing).

With several worker processes, set ``PROMETHEUS_MULTIPROC_DIR`` in the
server's environment to an empty directory of the service's own, so that
GET /metrics sums the processes' counts (see the deployment guide).
"""

import logging
import threading

from osc_placement.server import app
from osc_placement.server import conf as conf_mod

LOG = logging.getLogger(__name__)


def init_application(environ=None):
    """The configured application, as upstream's init_application."""
    conf = conf_mod.load([], conf_mod.config_files(environ))
    conf_mod.setup_logging(conf)
    if conf.log_options:
        conf.log_opt_values(LOG, logging.DEBUG)
    return app.make_app(conf)


application = None
with threading.Lock():
    if application is None:
        application = init_application()
