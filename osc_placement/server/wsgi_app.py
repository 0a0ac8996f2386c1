# SPDX-License-Identifier: Apache-2.0
"""WSGI entry point for uWSGI, mod_wsgi, gunicorn...: ``application``.

Configured as upstream's ``placement.wsgi.api``: ``placement.conf`` in
``$OS_PLACEMENT_CONFIG_DIR`` or oslo.config's default locations, with
upstream's defaults; oslo.log is set up from the same file. Built when
first imported, once per worker process::

    gunicorn osc_placement.server.wsgi_app:application

With several workers, set ``PROMETHEUS_MULTIPROC_DIR`` to an empty
directory of the service's own, so that GET /metrics sums them.
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
