"""The ``placement-server`` command: serve (default), db sync, db version.

Also run as ``python -m osc_placement.server``. With no arguments it serves
on 127.0.0.1:8778 with noauth2 and SQLite in the user's data directory,
creating or upgrading the schema first. A ``placement.conf`` (upstream
format) given with ``--config-file`` or found in ``OS_PLACEMENT_CONFIG_DIR``
or oslo.config's default locations is honoured; options override it.
"""

import argparse
import ipaddress
import os
import sys

import platformdirs

from osc_placement.server import conf as conf_mod
from osc_placement.server import http_server

APP_NAME = 'osc-placement'
EXIT_USAGE = 2


def default_connection():
    """SQLite in the user's data directory (created if needed)."""
    data_dir = platformdirs.user_data_dir(APP_NAME)
    os.makedirs(data_dir, exist_ok=True)
    return 'sqlite:///' + os.path.join(data_dir, 'placement.sqlite')


def _parser():
    parser = argparse.ArgumentParser(
        prog='placement-server',
        description='Embedded OpenStack Placement API server.')
    parser.add_argument('--config-file', action='append', default=[],
                        help='placement.conf to read (repeatable).')
    parser.add_argument('--host', help='Address to listen on '
                        '(default 127.0.0.1; [server] host).')
    parser.add_argument('--port', type=int,
                        help='Port (default 8778; [server] port).')
    parser.add_argument('--workers', type=int,
                        help='Worker processes (default 1).')
    parser.add_argument('--threads', type=int,
                        help='Threads per worker (default 8).')
    parser.add_argument('--http-server', choices=http_server.CHOICES,
                        help='The HTTP server (default granian; [server] '
                             'http_server).')
    parser.add_argument('--database-connection', '--db-url',
                        dest='connection',
                        help='SQLAlchemy URL ([placement_database] '
                             'connection); default: SQLite in the user '
                             'data directory.')
    parser.add_argument('--auth-strategy', choices=('noauth2', 'keystone'),
                        help='[api] auth_strategy (default noauth2 for this '
                             'command).')
    parser.add_argument('--insecure-noauth', action='store_true',
                        help='Allow noauth2 on a non-loopback address.')
    parser.add_argument('--access-log', action='store_true',
                        help='Log every request to stderr.')
    parser.add_argument('command', nargs='*', default=['serve'],
                        help='serve (default), "db sync" or "db version".')
    return parser


def _config_files(args):
    if args.config_file:
        return args.config_file
    config_dir = os.environ.get('OS_PLACEMENT_CONFIG_DIR')
    if config_dir:
        path = os.path.join(config_dir, 'placement.conf')
        if os.path.exists(path):
            return [path]
    return None


def build_conf(args):
    """ConfigOpts from files, then command-line overrides."""
    conf = conf_mod.new_conf()
    # This command is the embedded server: noauth2 on loopback and schema
    # upgrades at start unless the config file says otherwise.
    conf.set_default('auth_strategy', 'noauth2', group='api')
    conf.set_default('sync_on_startup', True, group='placement_database')
    conf([], project='placement', default_config_files=_config_files(args))
    overrides = (('host', args.host, 'server'), ('port', args.port, 'server'),
                 ('workers', args.workers, 'server'),
                 ('threads', args.threads, 'server'),
                 ('http_server', args.http_server, 'server'),
                 ('connection', args.connection, 'placement_database'),
                 ('auth_strategy', args.auth_strategy, 'api'))
    for name, value, group in overrides:
        if value is not None:
            conf.set_override(name, value, group)
    if args.insecure_noauth:
        conf.set_override('insecure_noauth_on_public_address', True,
                          'server')
    if not conf.placement_database.connection:
        conf.set_override('connection', default_connection(),
                          'placement_database')
    return conf


def is_loopback(host):
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_auth_exposure(conf):
    """Refuse noauth2 on a public address unless explicitly allowed."""
    if (conf.api.auth_strategy == 'noauth2'
            and not is_loopback(conf.server.host)
            and not conf.server.insecure_noauth_on_public_address):
        return ('Refusing to serve without authentication (noauth2) on %s: '
                'use a loopback address, --auth-strategy keystone, or '
                '--insecure-noauth.' % conf.server.host)
    return None


def _engine(conf):
    from osc_placement.server.db import engine
    return engine.create_engine(conf.placement_database.connection,
                                conf.placement_database)


def db_sync(conf):
    from osc_placement.server.db import engine as db_engine
    from osc_placement.server.db import migration
    from osc_placement.server.db import sync
    engine = _engine(conf)
    try:
        migration.upgrade(engine)
        sync.sync_standards(db_engine.Database(engine))
    finally:
        engine.dispose()
    return 0


def db_version(conf):
    from osc_placement.server.db import migration
    engine = _engine(conf)
    try:
        print(migration.current_version(engine))
    finally:
        engine.dispose()
    return 0


def serve(conf, access_log=False):
    problem = check_auth_exposure(conf)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    if conf.placement_database.sync_on_startup:
        db_sync(conf)
        # Done once here, not again in every worker.
        conf.set_override('sync_on_startup', False, 'placement_database')
    http_server.serve(conf, access_log)
    return 0


COMMANDS = {('serve',): serve, ('db', 'sync'): db_sync,
            ('db', 'version'): db_version}


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    command = COMMANDS.get(tuple(args.command))
    if command is None:
        parser.error('unknown command: %s' % ' '.join(args.command))
    conf = build_conf(args)
    if command is serve:
        return serve(conf, args.access_log)
    return command(conf)
