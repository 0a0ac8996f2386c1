# SPDX-License-Identifier: Apache-2.0
"""``placement-status upgrade check``: upstream Placement's checks, run
by oslo.upgradecheck (its output table and exit codes: 0 success, 1
warning, 2 failure, 255 error)."""

import sys

from oslo_config import cfg
from oslo_upgradecheck import common_checks
from oslo_upgradecheck import upgradecheck

from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.objects import online_migrations

_RUN_MIGRATIONS = 'Run the "placement-manage db online_data_migrations" ' \
                  'command.'


class Checks(upgradecheck.UpgradeCommands):
    """Upstream 16.0.0's checks, by upstream's names."""

    def __init__(self, conf):
        self.conf = conf

    def _read(self, query):
        db_conf = self.conf.placement_database
        engine = db_engine.create_engine(db_conf.connection, db_conf)
        try:
            with engine.connect() as conn:
                return query(conn)
        finally:
            engine.dispose()

    def _check_root_provider_ids(self):
        if self._read(online_migrations.any_missing_root):
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                details='There is at least one resource provider table '
                        'record which misses its root provider id. '
                        + _RUN_MIGRATIONS)
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_incomplete_consumers(self):
        missing = self._read(online_migrations.count_incomplete_consumers)
        if missing:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                details='There are %s incomplete consumers table records '
                        'for existing allocations. %s'
                        % (missing, _RUN_MIGRATIONS))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_policy_json(self):
        return common_checks.check_policy_json(self, self.conf)

    _upgrade_checks = (
        ('Missing Root Provider IDs', _check_root_provider_ids),
        ('Incomplete Consumers', _check_incomplete_consumers),
        ('Policy File JSON to YAML Migration', _check_policy_json),
    )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = conf_mod.new_conf()
    upgradecheck.register_cli_options(conf, Checks(conf))
    try:
        conf_mod.load(argv, None, conf)
    except cfg.Error as exc:
        print('placement-status: %s' % exc, file=sys.stderr)
        return 1
    return upgradecheck.run(conf)
