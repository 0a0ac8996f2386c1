# SPDX-License-Identifier: Apache-2.0
"""The ``placement-server`` command: serve (default), db sync, db version.

Also run as ``python -m osc_placement.server``. A ``placement.conf``
(upstream format) given with ``--config-file`` or ``--config-dir``, found
in ``$OS_PLACEMENT_CONFIG_DIR`` or in oslo.config's default locations
(``~/.placement``, ``~/``, ``/etc/placement``, ``/etc``) means what it
means to upstream: keystone auth unless it says otherwise, a required
``[placement_database] connection``, no schema upgrade at start unless
``sync_on_startup``. With no file at all this is the quickstart: noauth2 on
127.0.0.1:8778 and SQLite in the user's data directory, the schema
upgraded first; it says so when it starts. Options override either.
"""

import argparse
import ipaddress
import logging
import os
import sys

from oslo_config import cfg
import platformdirs

from osc_placement.server import conf as conf_mod
from osc_placement.server import http_server
from osc_placement.server import manage

APP_NAME = 'osc-placement'
EXIT_USAGE = 2
EXIT_SERVE_FAILED = 1
LOG = logging.getLogger(__name__)


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
    parser.add_argument('--config-dir', action='append', default=[],
                        help='Directory of *.conf files to read '
                             '(repeatable), as oslo.config reads them.')
    parser.add_argument('--host', help='Address to listen on '
                        '(default 127.0.0.1; [server] host).')
    parser.add_argument('--port', type=int,
                        help='Port (default 8778; [server] port).')
    parser.add_argument('--workers', type=int,
                        help='Worker processes (default 1).')
    parser.add_argument('--threads', type=int,
                        help='Threads per worker (default 8).')
    parser.add_argument('--http-server', choices=conf_mod.HTTP_SERVERS,
                        help='The HTTP server (default granian; [server] '
                             'http_server).')
    parser.add_argument('--database-connection', '--db-url',
                        dest='connection',
                        help='SQLAlchemy URL ([placement_database] '
                             'connection); quickstart default: SQLite in '
                             'the user data directory.')
    parser.add_argument('--auth-strategy', choices=('noauth2', 'keystone'),
                        help='[api] auth_strategy (quickstart default '
                             'noauth2; keystone with a config file).')
    parser.add_argument('--insecure-noauth', action='store_true',
                        help='Allow noauth2 on a non-loopback address.')
    parser.add_argument('--noauth-admin-without-token', action='store_true',
                        help='With noauth2: serve requests without a token '
                             'as the administrator instead of answering '
                             '401 ([api] noauth_admin_without_token), for '
                             'clients such as neutron-lib\'s NoAuthClient.')
    parser.add_argument('--debug', action='store_true',
                        help='[DEFAULT] debug: log at DEBUG.')
    # Kept so existing scripts still start: every request is now logged
    # at INFO, as upstream logs it.
    parser.add_argument('--access-log', action='store_true',
                        help=argparse.SUPPRESS)
    parser.add_argument('command', nargs='*', default=['serve'],
                        help='serve (default), "db sync", "db version" '
                             'or "db hand-back".')
    return parser


def _config_files(args):
    """The files to read, or [] for the quickstart."""
    if args.config_file:
        return args.config_file
    config_dir = os.environ.get(conf_mod.CONFIG_DIR_ENV, '').strip()
    if config_dir:
        path = os.path.join(config_dir, conf_mod.CONFIG_FILE)
        if os.path.exists(path):
            return [path]
    return cfg.find_config_files(project='placement')


def is_quickstart(args):
    """No configuration file anywhere: the zero-configuration server."""
    return not _config_files(args) and not args.config_dir


def build_conf(args):
    """ConfigOpts from files, then command-line overrides."""
    conf = conf_mod.new_conf()
    if is_quickstart(args):
        conf.set_default('auth_strategy', 'noauth2', group='api')
        conf.set_default('sync_on_startup', True, group='placement_database')
        if not args.connection:
            conf.set_default('connection', default_connection(),
                             group='placement_database')
    overrides = (('host', args.host, 'server'), ('port', args.port, 'server'),
                 ('workers', args.workers, 'server'),
                 ('threads', args.threads, 'server'),
                 ('http_server', args.http_server, 'server'),
                 ('connection', args.connection, 'placement_database'),
                 ('auth_strategy', args.auth_strategy, 'api'),
                 ('noauth_admin_without_token',
                  args.noauth_admin_without_token or None, 'api'),
                 ('debug', args.debug or None, None),
                 ('insecure_noauth_on_public_address',
                  args.insecure_noauth or None, 'server'))
    # Set before parsing: the parse checks the required connection.
    for name, value, group in overrides:
        if value is not None:
            conf.set_override(name, value, group)
    oslo_args = []
    for config_dir in args.config_dir:
        oslo_args += ['--config-dir', config_dir]
    return conf_mod.load(oslo_args, _config_files(args), conf)


def is_loopback(host):
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_auth_exposure(conf):
    """Refuse noauth2 on a public address unless explicitly allowed, and
    serving tokenless requests as admin without noauth2."""
    tokenless_admin = conf.api.noauth_admin_without_token
    if tokenless_admin and conf.api.auth_strategy != 'noauth2':
        return ('Refusing to serve: [api] noauth_admin_without_token '
                '(--noauth-admin-without-token) needs --auth-strategy '
                'noauth2.')
    if (conf.api.auth_strategy == 'noauth2'
            and not is_loopback(conf.server.host)
            and not conf.server.insecure_noauth_on_public_address):
        what = ('noauth2, requests without a token served as admin'
                if tokenless_admin else 'noauth2')
        return ('Refusing to serve without authentication (%s) on %s: '
                'use a loopback address, --auth-strategy keystone, or '
                '--insecure-noauth.' % (what, conf.server.host))
    return None


def announce_tokenless_admin(conf):
    if conf.api.noauth_admin_without_token:
        LOG.warning('[api] noauth_admin_without_token: requests without '
                    'a token are served as the administrator on %s:%d.',
                    conf.server.host, conf.server.port)


def announce_quickstart(conf):
    LOG.warning(
        'No placement.conf found: serving the quickstart configuration, '
        'noauth2 (tokens are not checked) on %s:%d with the database %s, '
        'its schema upgraded first. Give --config-file or set %s for a '
        'deployment.', conf.server.host, conf.server.port,
        conf.placement_database.connection, conf_mod.CONFIG_DIR_ENV)


def serve(conf, quickstart=False):
    problem = check_auth_exposure(conf)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    conf_mod.setup_logging(conf)
    if quickstart:
        announce_quickstart(conf)
    announce_tokenless_admin(conf)
    if conf.log_options:
        conf.log_opt_values(LOG, logging.DEBUG)
    if conf.placement_database.sync_on_startup:
        if manage.db_sync(conf):
            return EXIT_SERVE_FAILED
        # Done once here, not again in every worker.
        conf.set_override('sync_on_startup', False, 'placement_database')
    elif manage.check_current(conf):
        return EXIT_SERVE_FAILED
    try:
        http_server.serve(conf)
    except OSError as exc:  # the address is taken, or not ours to bind
        LOG.error('%s', exc)
        return EXIT_SERVE_FAILED
    return 0


COMMANDS = {('serve',): serve, ('db', 'sync'): manage.db_sync,
            ('db', 'version'): manage.db_version,
            ('db', 'hand-back'): manage.db_hand_back}


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    command = COMMANDS.get(tuple(args.command))
    if command is None:
        parser.error('unknown command: %s' % ' '.join(args.command))
    try:
        conf = build_conf(args)
    except cfg.Error as exc:
        # A missing connection, an unreadable file, a bad value.
        parser.exit(EXIT_USAGE, 'placement-server: %s\n' % exc)
    if command is serve:
        return serve(conf, is_quickstart(args))
    return command(conf)
