# SPDX-License-Identifier: Apache-2.0
"""Bulk edits that cannot hurt: ``trait set/delete --aggregate`` and
``inventory set --aggregate`` on an aggregate as clouds have them.

The aggregate holds a disabled host (COMPUTE_STATUS_DISABLED), a host with
two NUMA children (one of them in the aggregate too, one not), a plain
host and a shared disk (MISC_SHARES_VIA_AGGREGATE, DISK_GB). Every command
runs through the real shell against the embedded server; "nothing
changed" is checked on every provider's generation, traits and
inventories, the outsider NUMA child included.
"""

import io
import os
import uuid

from tests.functional import base

DISABLED = 'COMPUTE_STATUS_DISABLED'
SHARING = 'MISC_SHARES_VIA_AGGREGATE'
SSE = 'HW_CPU_X86_SSE'
AVX2 = 'HW_CPU_X86_AVX2'
NUMA = 'HW_NUMA_ROOT'


class BulkSafetyTests:

    def setUp(self):
        super().setUp()
        self.agg = str(uuid.uuid4())
        self.names = {}
        self.disabled = self.host('cn-disabled', [DISABLED, SSE])
        self.numa = self.host('cn-numa', [SSE])
        self.numa0 = self.child('numa0', self.numa, in_aggregate=True)
        self.numa1 = self.child('numa1', self.numa, in_aggregate=False)
        self.plain = self.host('cn-plain', [SSE])
        self.disk = self.provider('shared-disk', {'DISK_GB': 1000},
                                  [SHARING], in_aggregate=True)
        self.hosts = [self.disabled, self.numa, self.plain]
        self.everyone = self.hosts + [self.numa0, self.numa1, self.disk]

    # --- the cloud

    def provider(self, prefix, inventory, traits, in_aggregate,
                 parent=None):
        name = self.unique(prefix)
        rp = self.create_provider(name, parent=parent)['uuid']
        self.names[rp] = name
        self.set_inventory(rp, inventory)
        self.set_provider_traits(rp, traits)
        if in_aggregate:
            self.set_provider_aggregates(rp, [self.agg])
        return rp

    def host(self, prefix, traits):
        return self.provider(prefix, {'VCPU': 8, 'MEMORY_MB': 4096}, traits,
                             in_aggregate=True)

    def child(self, prefix, parent, in_aggregate):
        return self.provider(prefix, {'VCPU': 4, 'MEMORY_MB': 2048}, [NUMA],
                             in_aggregate, parent=parent)

    def label(self, rp):
        return '%s (%s)' % (self.names[rp], rp)

    def traits_of(self, rp):
        return sorted(self.http('GET', '/resource_providers/%s/traits' % rp,
                                expect=200).json()['traits'])

    def inventory_of(self, rp):
        return self.http('GET', '/resource_providers/%s/inventories' % rp,
                         expect=200).json()['inventories']

    def state(self):
        return {rp: (self.provider_generation(rp), self.traits_of(rp),
                     self.inventory_of(rp))
                for rp in self.everyone}

    def bulk(self, *argv, stdin=None, **kwargs):
        """``openstack resource provider <argv> <agg> --aggregate ...``
        with ``stdin`` as the shell's standard input (not a terminal
        unless the test gives one)."""
        noun, action, rest = argv[0], argv[1], list(argv[2:])
        command = ['resource', 'provider', noun, action, self.agg,
                   '--aggregate'] + rest
        with base.fixtures.MonkeyPatch('sys.stdin',
                                       stdin or io.StringIO('')):
            return self.openstack(command, **kwargs)

    @staticmethod
    def changes(rows, item='trait'):
        found = {}
        for row in rows:
            found.setdefault(row['resource_provider'], []).append(
                row['change'] + row[item])
        return {rp: sorted(changes) for rp, changes in found.items()}

    # --- what Placement lists as the aggregate's members

    def test_members_are_the_providers_in_the_aggregate(self):
        """member_of lists each provider associated with the aggregate
        itself: a NUMA child is a member only when it is associated; its
        parent's membership does not make it one."""
        listed = {rp['uuid'] for rp in self.http(
            'GET', '/resource_providers?member_of=' + self.agg,
            expect=200).json()['resource_providers']}
        self.assertEqual(set(self.hosts + [self.numa0, self.disk]), listed)

    # --- trait set: a replace

    def test_replace_without_confirmation_changes_nothing(self):
        before = self.state()
        result = self.bulk('trait', 'set', '--trait', AVX2, may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertIn(
            'Refusing to remove traits from 4 of 4 resource providers '
            'without confirmation; nothing was changed. Give --yes to '
            'confirm', result.stderr)
        # What it would have done, by name: the protected trait is kept.
        self.assertIn('  %s: +%s -%s' % (self.label(self.disabled), AVX2,
                                         SSE), result.stderr)
        self.assertIn('  %s: +%s -%s' % (self.label(self.numa0), AVX2,
                                         NUMA), result.stderr)
        self.assertEqual(before, self.state())

    def test_replace_confirmed_keeps_protected_and_the_shared_disk(self):
        before = self.state()
        result = self.bulk('trait', 'set', '--trait', AVX2, '--yes',
                           may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn('Kept on %s: %s (protected' % (
            self.label(self.disabled), DISABLED), result.stderr)
        self.assertIn('Left alone: %s, sharing resources' % self.label(
            self.disk), result.stderr)
        self.assertEqual(sorted([AVX2, DISABLED]),
                         self.traits_of(self.disabled))
        for rp in (self.numa, self.plain, self.numa0):
            self.assertEqual([AVX2], self.traits_of(rp))
        after = self.state()
        for rp in (self.disk, self.numa1):
            self.assertEqual(before[rp], after[rp])

    def test_protected_trait_goes_only_when_named(self):
        result = self.bulk('trait', 'set', '--trait', AVX2, '--yes',
                           '--remove-protected', DISABLED, may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([AVX2], self.traits_of(self.disabled))
        self.assertEqual([SHARING], self.traits_of(self.disk))

    def test_the_shared_disk_only_when_asked(self):
        gold = self.create_trait(self.unique_custom('CUSTOM_FT_GOLD'))
        before = self.state()
        # --amend removes nothing, so it needs no confirmation; it still
        # leaves the shared disk alone.
        self.bulk('trait', 'set', '--amend', '--trait', gold)
        self.assertEqual(before[self.disk], self.state()[self.disk])
        self.assertIn(gold, self.traits_of(self.disabled))
        self.assertIn(DISABLED, self.traits_of(self.disabled))
        again = self.bulk('trait', 'set', '--amend', '--trait', gold,
                          may_fail=True)
        self.assertEqual(0, again.code, again.stderr)
        self.assertIn('Nothing to change: the 4 resource providers already '
                      'are as asked.', again.stderr)
        self.bulk('trait', 'set', '--amend', '--trait', gold,
                  '--include-sharing')
        self.assertEqual(sorted([gold, SHARING]), self.traits_of(self.disk))
        # A replace that includes the shared disk keeps its sharing trait.
        self.bulk('trait', 'set', '--trait', AVX2, '--include-sharing',
                  '--yes')
        self.assertEqual(sorted([AVX2, SHARING]), self.traits_of(self.disk))

    def test_dry_run_names_each_change(self):
        before = self.state()
        rows = self.bulk('trait', 'set', '--trait', AVX2, '--dry-run',
                         use_json=True)
        self.assertEqual(['resource_provider', 'name', 'change', 'trait'],
                         list(rows[0]))
        self.assertEqual({
            self.disabled: sorted(['+' + AVX2, '-' + SSE]),
            self.numa: sorted(['+' + AVX2, '-' + SSE]),
            self.plain: sorted(['+' + AVX2, '-' + SSE]),
            self.numa0: sorted(['+' + AVX2, '-' + NUMA]),
        }, self.changes(rows))
        self.assertEqual({rp: self.names[rp] for rp in
                          (self.disabled, self.numa, self.plain,
                           self.numa0)},
                         {row['resource_provider']: row['name']
                          for row in rows})
        self.assertEqual(before, self.state())

    # --- trait delete

    def test_delete_by_name_enables_hosts_not_the_disk(self):
        self.set_provider_traits(self.disk, [SHARING, DISABLED])
        before = self.state()
        result = self.bulk('trait', 'delete', '--trait', DISABLED,
                           may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertIn('  %s: -%s' % (self.label(self.disabled), DISABLED),
                      result.stderr)
        self.assertEqual(before, self.state())
        self.bulk('trait', 'delete', '--trait', DISABLED, '--yes')
        self.assertEqual([SSE], self.traits_of(self.disabled))
        self.assertEqual(before[self.disk], self.state()[self.disk])

    # --- the prompt, on a real terminal

    def on_terminal(self, argv, answer):
        """Run the shell with a pseudo-terminal as stdin and stderr, as a
        person at a terminal would, typing ``answer``; return the exit
        code and what the terminal showed."""
        main, secondary = os.openpty()
        self.addCleanup(os.close, main)
        os.write(main, answer.encode())
        stdin = os.fdopen(secondary, 'r')
        self.addCleanup(stdin.close)
        stderr = os.fdopen(os.dup(secondary), 'w')
        self.addCleanup(stderr.close)
        base.forget_cached_placement_client()
        with base.fixtures.MonkeyPatch('sys.stdin', stdin), \
                base.fixtures.MonkeyPatch('sys.stderr', stderr), \
                base.fixtures.MonkeyPatch('sys.stdout', io.StringIO()):
            try:
                code = base.osc_shell.OpenStackShell().run(
                    self.auth_args() + argv)
            except SystemExit as exit_:
                code = exit_.code
        base.forget_cached_placement_client()
        stderr.flush()
        forget_stream(stderr)
        os.set_blocking(main, False)
        shown = b''
        try:
            while True:
                shown += os.read(main, 65536)
        except BlockingIOError:
            pass
        return code, shown.decode()

    def auth_args(self):
        argv = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
                '--os-endpoint', self.placement.endpoint]
        if self.VERSION:
            argv += ['--os-placement-api-version', self.VERSION]
        return argv

    def test_prompt_on_a_terminal(self):
        argv = ['resource', 'provider', 'trait', 'set', self.agg,
                '--aggregate', '--trait', AVX2]
        before = self.state()
        code, shown = self.on_terminal(argv, 'n\n')
        self.assertEqual(1, code, shown)
        self.assertIn('  %s: +%s -%s' % (self.label(self.plain), AVX2, SSE),
                      shown)
        self.assertIn('Remove them? [y/N] ', shown)
        self.assertIn('Not confirmed; nothing was changed.', shown)
        self.assertEqual(before, self.state())
        code, shown = self.on_terminal(argv, 'y\n')
        self.assertEqual(0, code, shown)
        self.assertEqual(sorted([AVX2, DISABLED]),
                         self.traits_of(self.disabled))
        self.assertEqual([AVX2], self.traits_of(self.plain))

    # --- a provider that changes between the plan and its write

    def test_removal_nobody_saw_is_not_written(self):
        """Another client adds a trait to the plain host after the plan
        was shown: the replace would now remove it too, so that host is
        not written and the command says which ones were."""
        extra = self.create_trait(self.unique_custom('CUSTOM_FT_LATE'))
        path = '/resource_providers/%s/traits' % self.plain
        puts = []

        def hook(environ):
            if environ['REQUEST_METHOD'] == 'PUT' and \
                    environ['PATH_INFO'] == path:
                puts.append(1)
                if len(puts) == 1:
                    self.set_provider_traits(self.plain, [SSE, extra])
            return None

        self.hook_server(hook)
        result = self.bulk('trait', 'set', '--trait', AVX2, '--yes',
                           may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertIn('Failed to set traits for resource provider %s: it '
                      'changed after it was read, and the change would now '
                      'also remove %s' % (self.plain, extra), result.stderr)
        self.assertIn('Failed to set traits for 1 of 4 resource providers.',
                      result.stderr)
        changed = [line for line in result.stderr.splitlines()
                   if line.startswith('Changed: ')]
        self.assertEqual(1, len(changed), result.stderr)
        for rp in (self.disabled, self.numa, self.numa0):
            self.assertIn(self.label(rp), changed[0])
        self.assertNotIn(self.plain, changed[0])
        self.assertEqual(sorted([SSE, extra]), self.traits_of(self.plain))

    # --- inventory set

    def test_inventory_replace_without_confirmation_changes_nothing(self):
        before = self.state()
        result = self.bulk('inventory', 'set', '--resource', 'VCPU=16',
                           may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertIn('Refusing to remove inventory classes from 4 of 4 '
                      'resource providers without confirmation; nothing '
                      'was changed.', result.stderr)
        self.assertIn('  %s: ~VCPU -MEMORY_MB' % self.label(self.plain),
                      result.stderr)
        self.assertEqual(before, self.state())

    def test_inventory_dry_run_names_each_change(self):
        before = self.state()
        rows = self.bulk('inventory', 'set', '--resource', 'VCPU=16',
                         '--dry-run', use_json=True)
        self.assertEqual({rp: ['-MEMORY_MB', '~VCPU'] for rp in
                          (self.disabled, self.numa, self.plain,
                           self.numa0)},
                         self.changes(rows, 'resource_class'))
        self.assertEqual(self.names[self.plain], [
            row['name'] for row in rows
            if row['resource_provider'] == self.plain][0])
        self.assertEqual(before, self.state())

    # --- OSC_PLACEMENT_BULK_EDITS=upstream: scripts written for upstream

    def upstream_bulk(self, *argv, **kwargs):
        with base.fixtures.EnvironmentVariable('OSC_PLACEMENT_BULK_EDITS',
                                               'upstream'):
            return self.bulk(*argv, **kwargs)

    def test_upstream_mode_dry_run_rows_are_what_each_would_have(self):
        before = self.state()
        rows = self.upstream_bulk('inventory', 'set', '--resource',
                                  'VCPU=16', '--dry-run', use_json=True)
        self.assertEqual(
            {rp: ['VCPU'] for rp in (self.disabled, self.numa, self.plain,
                                     self.numa0)},
            {rp: sorted(row['resource_class'] for row in rows
                        if row['resource_provider'] == rp)
             for rp in {row['resource_provider'] for row in rows}})
        self.assertEqual({16}, {row['total'] for row in rows})
        self.assertNotIn('change', rows[0])
        self.assertEqual(before, self.state())

    def test_upstream_mode_replaces_unasked_but_keeps_the_rules(self):
        self.upstream_bulk('trait', 'set', '--trait', AVX2)
        self.assertEqual(sorted([AVX2, DISABLED]),
                         self.traits_of(self.disabled))
        self.assertEqual([AVX2], self.traits_of(self.plain))
        self.assertEqual([SHARING], self.traits_of(self.disk))

    def test_inventory_confirmed_or_amended_leaves_the_disk_alone(self):
        before = self.state()
        self.bulk('inventory', 'set', '--amend', '--resource',
                  'VCPU:allocation_ratio=4.0')
        for rp in self.hosts + [self.numa0]:
            self.assertEqual(4.0, self.inventory_of(rp)['VCPU'][
                'allocation_ratio'])
        self.assertEqual(before[self.disk], self.state()[self.disk])
        self.bulk('inventory', 'set', '--resource', 'VCPU=16', '--yes')
        for rp in self.hosts + [self.numa0]:
            self.assertEqual(['VCPU'], list(self.inventory_of(rp)))
        after = self.state()
        for rp in (self.disk, self.numa1):
            self.assertEqual(before[rp], after[rp])
        self.bulk('inventory', 'set', '--amend', '--include-sharing',
                  '--resource', 'DISK_GB=500')
        self.assertEqual(500, self.inventory_of(self.disk)['DISK_GB'][
            'total'])


def forget_stream(stream):
    """The shell's log handlers write to the stderr it started with; point
    those that have ``stream`` elsewhere before it is closed, as the other
    tests' captured stderr is never closed."""
    import logging
    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)]
    for logger in loggers:
        for handler in logger.handlers:
            if getattr(handler, 'stream', None) is stream:
                handler.setStream(io.StringIO())


class TestBulkSafety_1_6(BulkSafetyTests, base.FunctionalTestCase):
    VERSION = '1.6'


class TestBulkSafety_Negotiated(BulkSafetyTests, base.FunctionalTestCase):
    VERSION = None


class TestBulkInventoryOld(base.FunctionalTestCase):
    """inventory set --aggregate below traits (1.3): the sharing provider
    is still found and left alone."""

    VERSION = '1.3'

    def setUp(self):
        super().setUp()
        self.agg = str(uuid.uuid4())
        self.host = self.compute_node()
        self.disk = self.create_provider()['uuid']
        self.set_inventory(self.disk, {'DISK_GB': 100})
        self.set_provider_traits(self.disk, [SHARING])
        for rp in (self.host, self.disk):
            self.set_provider_aggregates(rp, [self.agg])

    def amend_vcpu(self):
        rows = self.openstack(
            ['resource', 'provider', 'inventory', 'set', self.agg,
             '--aggregate', '--amend', '--resource', 'VCPU=4'],
            use_json=True)
        self.assertEqual({self.host},
                         {row['resource_provider'] for row in rows})
        self.assertEqual(['DISK_GB'], list(self.http(
            'GET', '/resource_providers/%s/inventories' % self.disk,
            version='1.3', expect=200).json()['inventories']))

    def test_sharing_found_on_a_server_without_the_trait_filter(self):
        """Below 1.18 the provider list cannot filter by trait: each
        member's traits are read instead (at the traits' version)."""
        self.pretend_server_max('1.17')
        calls = self.record_requests()
        self.amend_vcpu()
        self.assertIn(('GET', '/resource_providers/%s/traits' % self.disk,
                       'placement 1.6'),
                      [(m, u.replace(self.placement.endpoint, ''), v)
                       for m, u, v in calls])

    def test_sharing_found_below_traits(self):
        """At 1.3 the sharing providers are listed at the filter's
        version (1.18)."""
        self.amend_vcpu()
