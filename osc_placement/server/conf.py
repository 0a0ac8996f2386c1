"""Configuration: upstream-compatible ``placement.conf`` options.

``register_opts`` puts every option the server reads on a ConfigOpts;
``make_conf`` builds a ready one from keyword arguments (tests, tools).
"""

from keystonemiddleware import opts as keystone_opts
from oslo_config import cfg
from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi
from oslo_policy import opts as policy_opts

from osc_placement.server import http_server

NIL_UUID = '00000000-0000-0000-0000-000000000000'

API_OPTS = [
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=('keystone', 'noauth2'),
               deprecated_group='DEFAULT',
               help='keystone (keystonemiddleware auth_token) or noauth2 '
                    '(testing only: the token is "user[:project]").'),
]

PLACEMENT_OPTS = [
    cfg.BoolOpt('randomize_allocation_candidates', default=False),
    cfg.IntOpt('max_allocation_candidates', default=-1, min=-1),
    cfg.StrOpt('allocation_candidates_generation_strategy',
               default='depth-first',
               choices=('depth-first', 'breadth-first')),
    cfg.IntOpt('allocation_conflict_retry_count', default=10, min=0),
    cfg.StrOpt('incomplete_consumer_project_id', default=NIL_UUID),
    cfg.StrOpt('incomplete_consumer_user_id', default=NIL_UUID),
]

WORKAROUND_OPTS = [
    cfg.BoolOpt('optimize_for_wide_provider_trees', default=False),
]

DATABASE_OPTS = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the database.'),
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Upgrade the schema when the application starts.'),
    cfg.IntOpt('max_pool_size', default=5),
    cfg.IntOpt('max_overflow', default=50),
    cfg.IntOpt('pool_timeout', default=30),
    cfg.IntOpt('connection_recycle_time', default=3600),
    cfg.IntOpt('connection_debug', default=0),
    cfg.BoolOpt('sqlite_synchronous', default=True),
    cfg.IntOpt('sqlite_busy_timeout', default=30000,
               help='Milliseconds a SQLite writer waits for the lock.'),
]

SERVER_OPTS = [
    cfg.HostAddressOpt('host', default='127.0.0.1'),
    cfg.PortOpt('port', default=8778),
    cfg.IntOpt('workers', default=1, min=1),
    cfg.IntOpt('threads', default=8, min=1),
    cfg.StrOpt('http_server', default=http_server.GRANIAN,
               choices=http_server.CHOICES,
               help='The HTTP server running the workers.'),
    cfg.BoolOpt('insecure_noauth_on_public_address', default=False,
                help='Allow noauth2 on an address other than loopback.'),
]


def register_opts(conf):
    conf.register_opts(API_OPTS, group='api')
    conf.register_opts(PLACEMENT_OPTS, group='placement')
    conf.register_opts(WORKAROUND_OPTS, group='workarounds')
    conf.register_opts(DATABASE_OPTS, group='placement_database')
    conf.register_opts(SERVER_OPTS, group='server')
    conf.register_opts(cors.CORS_OPTS, group='cors')
    conf.register_opts(http_proxy_to_wsgi.OPTS, group='oslo_middleware')
    # oslo.policy's own option objects, as the library registers them: a
    # program sharing the ConfigOpts may change their defaults
    # (oslo_policy.opts.set_defaults, as upstream's test fixture does), and
    # copies registered here would then clash with the library's
    # registration (DuplicateOptError).
    policy_opts.set_defaults(conf)
    for group, opts in keystone_opts.list_auth_token_opts():
        conf.register_opts(opts, group=group)


def new_conf():
    conf = cfg.ConfigOpts()
    register_opts(conf)
    return conf


def load(args=(), default_config_files=None):
    """Parse the command line and config files like upstream does."""
    conf = new_conf()
    conf(list(args), project='placement',
         default_config_files=default_config_files)
    return conf


def make_conf(connection, auth_strategy='noauth2', enforce_new_defaults=None,
              policy_file=None, cors_allowed_origin=None,
              sync_on_startup=True, **placement_overrides):
    """A ready ConfigOpts from keyword arguments; no files are read."""
    conf = new_conf()
    conf([], project='placement', default_config_files=[])
    conf.set_override('connection', connection, 'placement_database')
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
