# SPDX-License-Identifier: Apache-2.0
"""``placement-manage``: upstream Placement's management command.

``db sync``, ``db version``, ``db stamp <version>`` and ``db
online_data_migrations [--max-count N]``, with upstream's options
(oslo.config's ``--config-file``, ``--config-dir``...), output and exit
codes. The
configuration is upstream's: ``[placement_database] connection`` is
required. ``placement-server db sync`` and ``db version`` run the same
functions on the server's (quickstart) configuration.
"""

import collections
import functools
import logging
import sys

from oslo_config import cfg
import prettytable

from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import sync
from osc_placement.server.objects import online_migrations

LOG = logging.getLogger(__name__)
# Upstream's exit codes.
EXIT_INVALID_INPUT = 127
EXIT_MIGRATION_ERRORS = 2
DEFAULT_BATCH = 50


def _engine(conf):
    db_conf = conf.placement_database
    engine = db_engine.create_engine(db_conf.connection, db_conf)
    db_engine.wait_for_database(engine, db_conf)
    return engine


def _on_database(conf, action):
    """Run ``action(engine)`` on the configured database: 0, or 1 with
    the reason for a database the command must not change or use."""
    engine = _engine(conf)
    try:
        action(engine)
    except (migration.UnknownDatabase, migration.NotCurrent) as exc:
        print('ERROR: %s' % exc, file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0


def _sync(engine):
    migration.upgrade(engine)
    sync.sync_standards(db_engine.Database(engine))


def db_sync(conf):
    """Upgrade to head, upstream's schema too; add standard classes, traits."""
    return _on_database(conf, _sync)


def db_hand_back(conf):
    """Remove this server's additions (``placement-server db hand-back``)."""
    return _on_database(conf, migration.hand_back)


def check_current(conf):
    """0 if the database is at this server's schema, the one it starts on."""
    return _on_database(conf, migration.require_current)


def db_version(conf):
    return _on_database(
        conf, lambda engine: print(migration.current_version(engine)))


def db_stamp(conf):
    return _on_database(
        conf, lambda engine: migration.stamp(engine, conf.command.version))


def _max_count(value):
    """The batch size asked for, None when not given, or -1 if invalid."""
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return -1


def db_online_data_migrations(conf):
    """Upstream's exit codes: 0 when nothing (more) can be done, 1 when
    --max-count was given and rows were migrated, 2 when a migration
    failed and nothing else could run, 127 for an invalid --max-count."""
    max_count = _max_count(conf.command.max_count)
    limited = max_count is not None
    if limited and max_count < 1:
        print('Must supply a positive value for max_count')
        return EXIT_INVALID_INPUT
    if not limited:
        max_count = DEFAULT_BATCH
        print('Running batches of %i until complete' % max_count)
    engine = _engine(conf)
    try:
        totals, ran, failed = _run_batches(
            db_engine.Database(engine), conf, max_count, limited)
    finally:
        engine.dispose()
    table = prettytable.PrettyTable(['Migration', 'Total Found', 'Completed'])
    for name, (found, done) in totals.items():
        table.add_row([name, found, done])
    print(table)
    # Limited runs that migrated something may unblock a failing one.
    if failed and not (limited and ran):
        print('Some migrations failed unexpectedly. Check log for details.')
        return EXIT_MIGRATION_ERRORS
    return 1 if ran else 0


def _run_batches(db, conf, max_count, limited):
    totals = collections.OrderedDict()
    while True:
        results, failed = _run_one_batch(db, conf, max_count)
        ran = 0
        for name, (found, done) in results.items():
            old_found, old_done = totals.get(name, (0, 0))
            totals[name] = (old_found + found, old_done + done)
            ran += done
        if limited or not ran:
            return totals, ran, failed


def _run_one_batch(db, conf, max_count):
    results = collections.OrderedDict()
    failed = False
    ran = 0
    for migrate in online_migrations.MIGRATIONS:
        name = migrate.__name__
        try:
            found, done = migrate(db, max_count - ran, conf)
        except Exception:
            message = 'Error attempting to run %s' % name
            print(message)
            LOG.exception(message)
            failed = True
            found = done = 0
        if found:
            print('%i rows matched query %s, %i migrated'
                  % (found, name, done))
        results[name] = (found, done)
        ran += done
        if ran >= max_count:
            break
    return results, failed


def _add_db_parsers(subparsers, conf):
    """The ``db`` sub-commands, as upstream declares them."""
    subparsers.required = False
    parser = subparsers.add_parser('db')
    parser.set_defaults(func=parser.print_help)
    db_parser = parser.add_subparsers(description='database commands')
    for name, func, text in (
            ('sync', db_sync, 'Sync the database to the current version.'),
            ('version', db_version, 'Report the current database version.'),
            ('stamp', db_stamp,
             'Stamp the revision table with the given version.'),
            ('online_data_migrations', db_online_data_migrations,
             'Run the online data migrations.')):
        sub = db_parser.add_parser(name, help=text, description=text)
        sub.set_defaults(func=functools.partial(func, conf))
        if name == 'stamp':
            sub.add_argument('version', help='the version to stamp')
        elif name == 'online_data_migrations':
            sub.add_argument('--max-count', metavar='<number>',
                             help='Maximum number of objects to consider')


def command_opts(conf):
    return [cfg.SubCommandOpt(
        'db', dest='command', title='Command', help='Available DB commands',
        handler=functools.partial(_add_db_parsers, conf=conf))]


def parse(argv, conf=None):
    conf = conf or conf_mod.new_conf()
    conf.register_cli_opts(command_opts(conf))
    return conf_mod.load(argv, None, conf)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = parse(argv)
    except cfg.Error as exc:
        print('placement-manage: %s' % exc, file=sys.stderr)
        return 1
    # No oslo.log set-up, as upstream's command: its output is what it
    # prints.
    func = getattr(conf.command, 'func', None)
    if func is None:
        conf.print_help()
        return 1
    return func() or 0
