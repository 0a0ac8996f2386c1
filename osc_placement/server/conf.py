# SPDX-License-Identifier: Apache-2.0
"""Configuration: upstream Placement 16.0.0's ``placement.conf``.

``register_opts`` puts on a ConfigOpts every option upstream registers,
with upstream's defaults, plus this server's ``[server]`` group.
Libraries' options are registered the way each library registers them,
so an embedder that later calls, say, oslo.policy's ``opts.set_defaults``
on the same ConfigOpts changes them in place instead of colliding with a
copy. ``load`` parses a command line and files as upstream's commands
do; ``make_conf`` builds one from keyword arguments (tests, tools);
``list_opts`` is the ``oslo.config.opts`` entry point.
"""

import importlib.metadata
import os

from keystonemiddleware import opts as keystone_opts
from oslo_config import cfg
from oslo_log import log
from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi
from oslo_policy import opts as policy_opts

from osc_placement.server import health
from osc_placement.server import log_format
from osc_placement.server import profiling

NIL_UUID = '00000000-0000-0000-0000-000000000000'
CONFIG_FILE = 'placement.conf'
CONFIG_DIR_ENV = 'OS_PLACEMENT_CONFIG_DIR'
# The HTTP servers [server] http_server names (http_server.py runs them).
GRANIAN = 'granian'
GUNICORN = 'gunicorn'
HTTP_SERVERS = (GRANIAN, GUNICORN)

API_OPTS = [
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=('keystone', 'noauth2'),
               deprecated_group='DEFAULT',
               help='keystone (keystonemiddleware auth_token) or noauth2 '
                    '(testing only: the token is "user[:project]").'),
    # Ours, not upstream's: upstream ignores it, so a file setting it
    # still means plain noauth2 there.
    cfg.BoolOpt('noauth_admin_without_token', default=False,
                help='With noauth2 (testing only): serve a request that '
                     'sends no X-Auth-Token as the administrator, as if '
                     'its token were "admin", instead of answering 401; '
                     'its body is read as JSON when it has no '
                     'Content-Type. For clients that send no token, such '
                     'as neutron-lib\'s NoAuthClient. Requests with a '
                     'token keep noauth2\'s meaning. placement-server '
                     'refuses it on a non-loopback address as it refuses '
                     'noauth2, and with keystone.'),
]

PLACEMENT_OPTS = [
    cfg.BoolOpt('randomize_allocation_candidates', default=False,
                help='Return a random sample of the candidates when a '
                     'limit applies.'),
    # No lower bound, as upstream: any negative value means no limit.
    cfg.IntOpt('max_allocation_candidates', default=-1,
               help='Most candidates generated for one request (-1, or '
                    'any negative value: no limit).'),
    cfg.StrOpt('allocation_candidates_generation_strategy',
               default='depth-first',
               choices=('depth-first', 'breadth-first'),
               help='Order in which viable roots are visited when '
                    'candidates are generated.'),
    cfg.IntOpt('allocation_conflict_retry_count', default=10, min=0,
               help='Server-side retries of an allocation write that lost '
                    'a provider generation race.'),
    cfg.StrOpt('incomplete_consumer_project_id', default=NIL_UUID,
               help='Project recorded for consumers written before '
                    'microversion 1.8 without one.'),
    cfg.StrOpt('incomplete_consumer_user_id', default=NIL_UUID,
               help='User recorded for consumers written before '
                    'microversion 1.8 without one.'),
]

WORKAROUND_OPTS = [
    cfg.BoolOpt('optimize_for_wide_provider_trees', default=False,
                help='Accepted for compatibility; candidate generation '
                     'here prunes wide trees whatever its value, and '
                     'always checks what providers already have in use.'),
]

# [placement_database] as upstream declares it (upstream hands it to
# oslo.db's engine facade), plus sqlite_busy_timeout and
# unavailable_retry_after of our own.
DATABASE_OPTS = [
    cfg.StrOpt('connection', required=True, secret=True,
               help='SQLAlchemy URL of the database.'),
    cfg.StrOpt('connection_parameters', default='',
               help='Extra URL query parameters for the connection, '
                    'e.g. "connect_timeout=5".'),
    cfg.BoolOpt('sqlite_synchronous', default=True,
                help='SQLite: wait for data to reach the disk.'),
    cfg.StrOpt('slave_connection', secret=True,
               help='Accepted for compatibility and not used: upstream '
                    'Placement never reads from it either.'),
    cfg.StrOpt('mysql_sql_mode', default='TRADITIONAL',
               help='MySQL/MariaDB session sql_mode; empty leaves the '
                    'server\'s own.'),
    cfg.IntOpt('connection_recycle_time', default=3600,
               help='Seconds after which a pooled connection is renewed.'),
    cfg.IntOpt('max_pool_size',
               help='Connections kept open per process (SQLAlchemy\'s '
                    'default, 5, when unset).'),
    cfg.IntOpt('max_retries', default=10,
               help='Attempts to reach the database at start-up (-1: '
                    'forever).'),
    cfg.IntOpt('retry_interval', default=10,
               help='Seconds between those attempts.'),
    cfg.IntOpt('max_overflow',
               help='Connections opened beyond max_pool_size under load '
                    '(SQLAlchemy\'s default, 10, when unset).'),
    cfg.IntOpt('connection_debug', default=0, min=0, max=100,
               help='SQL logging: 50 and above logs every statement.'),
    cfg.BoolOpt('connection_trace', default=False,
                help='Accepted for compatibility and not used.'),
    cfg.IntOpt('pool_timeout',
               help='Seconds to wait for a pooled connection '
                    '(SQLAlchemy\'s default, 30, when unset).'),
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Upgrade the schema when the application starts.'),
    cfg.IntOpt('sqlite_busy_timeout', default=30000,
               help='Milliseconds a SQLite writer waits for the lock.'),
    cfg.IntOpt('unavailable_retry_after', default=2, min=1, max=3600,
               help='Seconds in the Retry-After header of the 503 '
                    'answered while the database is unreachable, '
                    'restarting or failing over.'),
]

# [DEFAULT] options upstream registers (conf/base.py, paths.py and
# placement.py's service options).
DEFAULT_OPTS = [
    cfg.StrOpt('tempdir',
               help='Explicitly specify the temporary working directory.'),
    cfg.StrOpt('pybasedir',
               default=os.path.abspath(os.path.join(
                   os.path.dirname(__file__), '..', '..')),
               sample_default='<Path>',
               help='Where the Python modules are installed.'),
    cfg.StrOpt('state_path', default='$pybasedir',
               help='Top-level directory for state.'),
    cfg.BoolOpt('log_options', default=True,
                help='Log every option\'s value at DEBUG when starting.'),
]

# This server's own: placement-server's listening socket and workers.
SERVER_OPTS = [
    cfg.HostAddressOpt('host', default='127.0.0.1',
                       help='Address placement-server listens on.'),
    cfg.PortOpt('port', default=8778, help='Its port.'),
    cfg.IntOpt('workers', default=1, min=1, help='Worker processes.'),
    # More threads than this in one process spend their time handing the
    # GIL to each other: past a few requests in flight, a worker serves
    # fewer per second and burns more CPU on each.
    cfg.IntOpt('threads', default=4, min=1, help='Threads per worker.'),
    cfg.StrOpt('http_server', default=GRANIAN, choices=HTTP_SERVERS,
               help='The HTTP server running the workers.'),
    cfg.BoolOpt('insecure_noauth_on_public_address', default=False,
                help='Allow noauth2 on an address other than loopback.'),
]

# This server's own: GET /metrics (Prometheus), see metrics.py.
METRICS_OPTS = [
    cfg.BoolOpt('enabled', default=True,
                help='Serve GET /metrics in Prometheus\' text format. '
                     'Off, /metrics is an unknown path (404) and requests '
                     'are not measured.'),
    cfg.BoolOpt('per_provider', default=True,
                help='Publish the capacity series of every provider and '
                     'resource class (openstack_placement_resource_*): '
                     'four series per inventory. Turn off in very large '
                     'clouds; the cloud totals stay.'),
    cfg.BoolOpt('per_aggregate', default=True,
                help='Publish capacity and usage per aggregate and '
                     'resource class.'),
    cfg.ListOpt('allowed_source_ranges',
                default=['127.0.0.0/8', '::1/128'],
                help='Networks (CIDR) whose clients may read /metrics, '
                     'which needs no token; others get 403. The address '
                     'checked is the peer of the connection: behind a '
                     'proxy, the proxy\'s.'),
]

# Upstream's CORS defaults (placement.wsgi._set_middleware_defaults).
CORS_DEFAULTS = {
    'allow_headers': ['X-Auth-Token', 'X-Openstack-Request-Id',
                      'X-Identity-Status', 'X-Roles', 'X-Service-Catalog',
                      'X-User-Id', 'X-Tenant-Id', 'OpenStack-API-Version'],
    'expose_headers': ['X-Auth-Token', 'X-Openstack-Request-Id',
                       'X-Subject-Token', 'X-Service-Token',
                       'OpenStack-API-Version'],
    'allow_methods': ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'],
}

OWN_GROUPS = (
    ('DEFAULT', DEFAULT_OPTS),
    ('api', API_OPTS),
    ('placement', PLACEMENT_OPTS),
    ('placement_database', DATABASE_OPTS),
    ('workarounds', WORKAROUND_OPTS),
    ('server', SERVER_OPTS),
    ('metrics', METRICS_OPTS),
)


def register_opts(conf):
    for group, opts in OWN_GROUPS:
        conf.register_opts(opts, group=None if group == 'DEFAULT' else group)
    log.register_options(conf)
    policy_opts.set_defaults(conf)
    # oslo.middleware shares its option lists rather than registering;
    # upstream sets the CORS defaults before it parses.
    cors.set_defaults(**CORS_DEFAULTS)
    conf.register_opts(cors.CORS_OPTS, group='cors')
    conf.register_opts(http_proxy_to_wsgi.OPTS, group='oslo_middleware')
    health.register_opts(conf)
    profiling.register_opts(conf)
    # keystonemiddleware registers exactly these on the ConfigOpts it is
    # handed (AuthProtocol); registered here so they can be set before.
    for group, opts in keystone_opts.list_auth_token_opts():
        conf.register_opts(opts, group=group)


def list_opts():
    """``oslo.config.opts`` entry point for placement.conf, with our
    [healthcheck] backend option (oslo.middleware lists the others)."""
    return [(group, list(opts)) for group, opts in OWN_GROUPS] + [
        (health.GROUP, list(health.OPTS))]


def set_lib_defaults():
    """The ``oslo.config.opts.defaults`` entry point: the libraries'
    defaults this server changes, for the sample file generator (as
    upstream's, for oslo.policy; and the CORS defaults)."""
    policy_opts.set_defaults(cfg.CONF, 'policy.yaml')
    cors.set_defaults(**CORS_DEFAULTS)
    health.set_lib_defaults()


def new_conf():
    conf = cfg.ConfigOpts()
    register_opts(conf)
    return conf


def config_files(environ=None):
    """The files upstream's WSGI module reads: placement.conf in
    ``$OS_PLACEMENT_CONFIG_DIR`` when set, else None (oslo.config's
    default locations: ~/.placement, ~/, /etc/placement, /etc)."""
    environ = os.environ if environ is None else environ
    config_dir = environ.get(CONFIG_DIR_ENV, '').strip()
    if config_dir:
        return [os.path.join(config_dir, CONFIG_FILE)]
    return None


def load(args=(), default_config_files=None, conf=None):
    """Parse the command line and config files like upstream does.

    Raises oslo.config's errors (RequiredOptError when no connection is
    configured, ConfigFilesNotFoundError...) for the caller to report."""
    conf = conf or new_conf()
    conf(list(args), project='placement', version=version(),
         default_config_files=default_config_files)
    return conf


def version():
    try:
        return importlib.metadata.version('osc-placement')
    except importlib.metadata.PackageNotFoundError:
        return 'unknown'


def setup_logging(conf):
    """oslo.log as upstream sets it up: [DEFAULT] debug, log_file,
    log_dir, use_journal, use_syslog, log_config_append..., its context
    formatter with log_format's shortcut for request lines."""
    log.set_defaults(default_log_levels=log.get_default_log_levels()
                     + ['routes=INFO', 'granian=WARNING'])
    log.setup(conf, 'placement')
    log_format.install()


def make_conf(connection, auth_strategy='noauth2', enforce_new_defaults=None,
              policy_file=None, cors_allowed_origin=None,
              sync_on_startup=True, **placement_overrides):
    """A ready ConfigOpts from keyword arguments; no files are read.

    A connection of None leaves it unset, as a file without one would."""
    conf = new_conf()
    # Set before parsing: the parse checks that required options have one.
    conf.set_override('connection', '' if connection is None else connection,
                      'placement_database')
    conf([], project='placement', default_config_files=[])
    conf.set_override('sync_on_startup', sync_on_startup,
                      'placement_database')
    conf.set_override('auth_strategy', auth_strategy, 'api')
    if enforce_new_defaults is not None:
        conf.set_override('enforce_new_defaults', enforce_new_defaults,
                          'oslo_policy')
    if policy_file is not None:
        conf.set_override('policy_file', policy_file, 'oslo_policy')
    if cors_allowed_origin is not None:
        conf.set_override('allowed_origin', cors_allowed_origin, 'cors')
    for name, value in placement_overrides.items():
        group = ('workarounds' if name == 'optimize_for_wide_provider_trees'
                 else 'placement')
        conf.set_override(name, value, group)
    return conf
