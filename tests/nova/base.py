# SPDX-License-Identifier: Apache-2.0
"""The base test case of the Nova world suite.

Nova's own ``ProviderUsageBaseTestCase`` runs Nova's API, conductor,
scheduler and any number of computes (the fake virt driver) in one
process. Its Placement is ``osc_placement.server.fixture.
PlacementFixture``, through the one import line
``tools/nova-functional.sh`` changes in Nova's functional fixtures.
This case adds what the command tests need on top: our ``placement``
shell run in-process against the same Nova API and Placement, and
Nova's own ``nova-manage placement audit`` to compare with.
"""

import contextlib
import io
import json
import logging
import sys
import warnings

from keystoneauth1 import session as ks_session
from nova.cmd import manage
from nova.tests.functional import integrated_helpers

from osc_placement import shell
from tests.nova import auth


class InProcessShell(shell.PlacementShell):
    """Our real shell; only its session comes from the test's plugin
    instead of the command line's auth options."""

    def __init__(self, auth_plugin, stdin, stdout, stderr):
        super().__init__(stdin=stdin, stdout=stdout, stderr=stderr)
        self._auth_plugin = auth_plugin

    def prepare_to_run_command(self, cmd):
        if not shell.needs_auth(cmd):
            return
        self.client_manager.session = ks_session.Session(
            auth=self._auth_plugin)


@contextlib.contextmanager
def captured_process_output():
    """stdout and stderr of the process, and the logging handlers the
    shell adds to the root logger, for the duration of one command.

    Python warnings go to a list (the third value), not to stderr: the
    Nova and Placement services running in this process emit them, and
    Nova's test base turns on warnings a command line never shows.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield out, err, caught
    finally:
        sys.stdout, sys.stderr = saved
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


class NovaWorldTestCase(integrated_helpers.ProviderUsageBaseTestCase):
    """Nova with our Placement; no computes until a test starts some."""

    compute_driver = 'fake.MediumFakeDriver'

    def setUp(self):
        super().setUp()
        # The project Nova's test clients create servers in; the
        # commands' credentials are scoped to it too.
        self.project_id = self.api_fixture.project_id

    # --- where things are --------------------------------------------

    @property
    def placement_url(self):
        return self.placement.fixture.endpoint

    @property
    def compute_url(self):
        return self.api_fixture.base_url

    def catalog(self):
        return {'placement': self.placement_url,
                'compute': self.compute_url}

    def auth_plugin(self, admin=True, catalog=None):
        """Credentials for the commands: Nova's admin, or a member of
        the project (Nova answers 403 to what needs an admin). Placement
        always sees its admin, so a 403 can only come from Nova."""
        if catalog is None:
            catalog = self.catalog()
        if admin:
            return auth.NovaWorldAuth(catalog, user='admin',
                                      project_id=self.project_id,
                                      roles=auth.ADMIN_ROLES)
        return auth.NovaWorldAuth(catalog, user='member',
                                  project_id=self.project_id,
                                  roles=auth.MEMBER_ROLES)

    # --- our commands --------------------------------------------------

    def run_command(self, *argv, admin=True, catalog=None, stdin=''):
        """Run ``placement ARGV`` in this process against this world's
        Nova and Placement. Returns (exit code, stdout, stderr); the
        Python warnings raised meanwhile are in ``command_warnings``."""
        out, err = io.StringIO(), io.StringIO()
        app = InProcessShell(self.auth_plugin(admin, catalog),
                             io.StringIO(stdin), out, err)
        with captured_process_output() as (_, process_err, caught):
            shell.skip_distribution_scan()
            code = app.run(list(argv))
        self.command_warnings = caught
        return code, out.getvalue(), err.getvalue() + process_err.getvalue()

    def run_json(self, *argv, **kwargs):
        """``run_command`` with ``-f json``; returns (exit code, parsed
        output or None, stderr)."""
        code, out, err = self.run_command(*(argv + ('-f', 'json')),
                                          **kwargs)
        data = json.loads(out) if out.strip() else None
        return code, data, err

    # --- Nova's own audit ------------------------------------------------

    def nova_manage_audit(self, delete=False, verbose=True,
                          provider_uuid=None):
        """``nova-manage placement audit`` run in this process, as Nova's
        own functional tests run it. Returns (exit code, output)."""
        commands = manage.PlacementCommands()
        with captured_process_output() as (out, _, _):
            code = commands.audit(verbose=verbose, delete=delete,
                                  provider_uuid=provider_uuid)
        return code, out.getvalue()

    # --- Placement's view, straight from its API -----------------------

    def placement_get(self, url, version='1.38'):
        response = self.placement.get(url, version=version)
        self.assertEqual(200, response.status, response.body)
        return response.body

    def consumer_allocations(self, consumer_uuid):
        """{provider uuid: {class: amount}} of one consumer."""
        body = self.placement_get('/allocations/%s' % consumer_uuid)
        return {rp: alloc['resources']
                for rp, alloc in body['allocations'].items()}

    def consumers_on(self, rp_uuid):
        """The consumer uuids holding allocations on a provider."""
        body = self.placement_get(
            '/resource_providers/%s/allocations' % rp_uuid)
        return set(body['allocations'])

    def all_consumers(self):
        """Every consumer holding allocations anywhere."""
        consumers = set()
        for rp in self.placement_get('/resource_providers')[
                'resource_providers']:
            consumers |= self.consumers_on(rp['uuid'])
        return consumers
