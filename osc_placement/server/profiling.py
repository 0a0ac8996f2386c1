# SPDX-License-Identifier: Apache-2.0
"""OSProfiler, as upstream Placement uses it, when it is installed.

As upstream: osprofiler's ``[profiler]`` options, its notifier set up in
each serving process, and its WSGI middleware in front when ``[profiler]
enabled``; a request with trace headers signed with one of
``hmac_keys`` is traced, with a ``db`` span per statement under
``trace_sqlalchemy``. osprofiler is not a dependency: without it
``[profiler] enabled`` is still read, so that a file asking for
profiling gets a warning at start rather than silence.
"""

import importlib
import logging
import socket
import weakref

from oslo_config import cfg
import sqlalchemy

LOG = logging.getLogger(__name__)

GROUP = 'profiler'
PROJECT = SERVICE = 'placement'
MISSING = ('[profiler] enabled is true but osprofiler cannot be imported '
           '(%s): requests are not traced. Install it (pip install '
           'osprofiler) in the server\'s environment, or set enabled = '
           'false.')

# osprofiler's own option, for a server without osprofiler.
FALLBACK_OPTS = [
    cfg.BoolOpt('enabled', default=False, deprecated_name='profiler_enabled',
                help='Trace requests with OSProfiler (needs osprofiler).'),
]


def _osprofiler(module):
    """osprofiler's ``module``; ImportError when osprofiler is missing."""
    return importlib.import_module('osprofiler.' + module)


def register_opts(conf):
    try:
        opts = _osprofiler('opts')
    except ImportError:
        conf.register_opts(FALLBACK_OPTS, group=GROUP)
    else:
        opts.set_defaults(conf)


# Engines given osprofiler's statement hooks: a second make_app on the
# same Database (tests) must not trace each statement twice.
_TRACED_ENGINES = weakref.WeakSet()


def middleware(app, conf, db):
    """``app`` traced by osprofiler when ``[profiler] enabled`` says so
    and osprofiler is installed; else ``app``, with a warning when the
    file asked for a profiler that is missing."""
    if not conf.profiler.enabled:
        return app
    try:
        web = _osprofiler('web')
        initializer = _osprofiler('initializer')
    except ImportError as exc:
        LOG.warning(MISSING, exc)
        return app
    # Per process that serves, as upstream's init_application: the
    # notifier may hold a connection to where the spans go. Upstream
    # passes "??" as the host; the spans name the real one here.
    initializer.init_from_conf(conf=conf, context={}, project=PROJECT,
                               service=SERVICE, host=socket.gethostname())
    if conf.profiler.trace_sqlalchemy:
        _trace_statements(db.engine)
    return web.WsgiMiddleware.factory({}, **conf.profiler)(app)


def _trace_statements(engine):
    if engine in _TRACED_ENGINES:
        return
    _osprofiler('sqlalchemy').add_tracing(sqlalchemy, engine, 'db')
    _TRACED_ENGINES.add(engine)
