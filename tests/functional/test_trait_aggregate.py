# SPDX-License-Identifier: Apache-2.0
"""``resource provider trait set/delete`` with ``--aggregate``, ``--amend``,
``--trait`` (delete) and ``--dry-run``, through the real shell.

Each member of the test aggregate starts with its own custom trait and a
standard one, so a test can tell "kept" from "replaced". An outsider with
the same traits checks that nothing outside the aggregate is touched.
"""

import json
import re
import uuid

from osc_placement.resources import bulk
from tests.functional import base

AVX = 'HW_CPU_X86_AVX'
SSE = 'HW_CPU_X86_SSE'


class TraitAggregateTests:

    def setUp(self):
        super().setUp()
        self.agg = str(uuid.uuid4())
        self.marker = self.create_trait(self.unique_custom('CUSTOM_FT_MARK'))
        self.own = {}
        self.members = sorted(self.create_provider()['uuid'] for _ in range(3))
        for rp in self.members:
            self.own[rp] = self.create_trait(
                self.unique_custom('CUSTOM_FT_OWN'))
            self.set_provider_traits(rp, [self.own[rp], SSE])
            self.set_provider_aggregates(rp, [self.agg])
        self.outsider = self.create_provider()['uuid']
        self.set_provider_traits(self.outsider, [SSE, self.marker])

    # --- running and inspecting

    def trait_cmd(self, action, *args, **kwargs):
        return self.openstack(
            ['resource', 'provider', 'trait', action, self.agg,
             '--aggregate'] + list(args), **kwargs)

    def traits_of(self, rp):
        return sorted(self.http('GET', '/resource_providers/%s/traits' % rp,
                                expect=200).json()['traits'])

    def state(self):
        """Every provider's (generation, traits), outsider included."""
        return {rp: (self.provider_generation(rp),
                     self.traits_of(rp))
                for rp in self.members + [self.outsider]}

    def listed(self):
        """The members in the server's listing order."""
        return [rp['uuid'] for rp in self.http(
            'GET', '/resource_providers?member_of=' + self.agg,
            expect=200).json()['resource_providers']]

    @staticmethod
    def by_provider(rows):
        found = {}
        for row in rows:
            found.setdefault(row['resource_provider'], []).append(
                row['name'])
        return {rp: sorted(names) for rp, names in found.items()}

    def fail_trait_puts_to(self, rp, answer):
        """Every PUT of ``rp``'s traits gets ``answer`` (a hook's triple)
        instead of reaching the server; returns the list of those PUTs."""
        path = '/resource_providers/%s/traits' % rp
        seen = []

        def hook(environ):
            if environ['REQUEST_METHOD'] == 'PUT' and \
                    environ['PATH_INFO'] == path:
                seen.append(rp)
                return answer
            return None

        self.hook_server(hook)
        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.common.SERVER_ERROR_BACKOFF', 0.001))
        return seen

    # --- set

    def test_set_replaces_on_every_member(self):
        before = self.state()
        rows = self.trait_cmd('set', '--trait', self.marker, '--trait', AVX,
                              '--yes', use_json=True)
        self.assertEqual(['resource_provider', 'name'], list(rows[0]))
        self.assertEqual({rp: sorted([self.marker, AVX])
                          for rp in self.members}, self.by_provider(rows))
        # Rows come provider by provider, in the server's listing order.
        listed = [rp['uuid'] for rp in self.http(
            'GET', '/resource_providers?member_of=' + self.agg,
            expect=200).json()['resource_providers']]
        self.assertEqual(listed, list(dict.fromkeys(
            row['resource_provider'] for row in rows)))
        for rp in self.members:
            self.assertEqual(sorted([self.marker, AVX]), self.traits_of(rp))
            self.assertEqual(before[rp][0] + 1,
                             self.provider_generation(rp))
        self.assertEqual(before[self.outsider], self.state()[self.outsider])

    def test_amend_adds_and_keeps_the_others(self):
        first, second, third = self.members
        self.set_provider_traits(second, [self.own[second], SSE, self.marker])
        before = self.state()
        rows = self.trait_cmd('set', '--amend', '--trait', self.marker,
                              use_json=True)
        expected = {rp: sorted([self.own[rp], SSE, self.marker])
                    for rp in self.members}
        self.assertEqual(expected, self.by_provider(rows))
        self.assertEqual(expected, {rp: self.traits_of(rp)
                                    for rp in self.members})
        # A member that had the trait already was not written.
        after = self.state()
        self.assertEqual(before[second], after[second])
        for rp in (first, third):
            self.assertEqual(before[rp][0] + 1, after[rp][0])
        self.assertEqual(before[self.outsider], after[self.outsider])

    @staticmethod
    def changes(rows):
        """A dry run's rows as {provider: sorted "+TRAIT"/"-TRAIT"}."""
        found = {}
        for row in rows:
            found.setdefault(row['resource_provider'], []).append(
                row['change'] + row['trait'])
        return {rp: sorted(changes) for rp, changes in found.items()}

    def test_dry_run_changes_nothing(self):
        before = self.state()
        replaced = self.trait_cmd('set', '--dry-run', '--trait', AVX,
                                  use_json=True)
        self.assertEqual(['resource_provider', 'name', 'change', 'trait'],
                         list(replaced[0]))
        self.assertEqual({rp: sorted(['+' + AVX, '-' + self.own[rp],
                                      '-' + SSE])
                          for rp in self.members},
                         self.changes(replaced))
        names = {rp['uuid']: rp['name'] for rp in self.http(
            'GET', '/resource_providers?member_of=' + self.agg,
            expect=200).json()['resource_providers']}
        self.assertEqual(names, {row['resource_provider']: row['name']
                                 for row in replaced})
        amended = self.trait_cmd('set', '--dry-run', '--amend',
                                 '--trait', AVX, use_json=True)
        self.assertEqual({rp: ['+' + AVX] for rp in self.members},
                         self.changes(amended))
        removed = self.trait_cmd('delete', '--dry-run', '--trait', SSE,
                                 use_json=True)
        self.assertEqual({rp: ['-' + SSE] for rp in self.members},
                         self.changes(removed))
        self.assertEqual(before, self.state())

    def test_unknown_trait_fails_on_every_member(self):
        """The server refuses the name (400) for each member: each is a
        failure, counted, and nothing is changed anywhere."""
        missing = self.unique_custom('CUSTOM_FT_NOPE')
        before = self.state()
        result = self.trait_cmd('set', '--amend', '--trait', missing,
                                may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        lines = result.stderr.strip().splitlines()
        # Each line ends with the id of its own failed request.
        self.assertEqual(sorted(
            ['Failed to set traits for resource provider %s: No such trait '
             '%s (HTTP 400).' % (rp, missing) for rp in self.members]
            + ['No resource provider was changed.']),
            sorted(re.sub(base.REQUEST_ID, '', line) for line in lines[:-1]))
        self.assertEqual(3, len({re.search(base.REQUEST_ID, line).group()
                                 for line in lines[:-2]
                                 if re.search(base.REQUEST_ID, line)}))
        self.assertEqual('Failed to set traits for 3 of 3 resource '
                         'providers.', lines[-1])
        self.assertEqual(before, self.state())
        # A dry run asks the server whether the names exist, since the
        # write that would refuse them is not sent.
        self.assertCommandFails(
            ['resource', 'provider', 'trait', 'set', self.agg, '--aggregate',
             '--dry-run', '--trait', missing, '--trait', AVX],
            'No such trait(s): %s.' % missing)

    def test_lost_race_is_retried(self):
        """Another client changes a member between the listing (or the
        read) and the write: the write gets a 409, the member is read
        again and written again, keeping (with --amend) the other
        client's trait."""
        first, second, third = self.members
        path = '/resource_providers/%s/traits' % second
        puts = []

        def hook(environ):
            if environ['REQUEST_METHOD'] != 'PUT' or \
                    environ['PATH_INFO'] != path:
                return None
            puts.append(second)
            if len(puts) == 1:
                # The other client wins the race; this request, sent while
                # the hook runs, is the second PUT seen here.
                self.set_provider_traits(second, [self.own[second], SSE, AVX])
            return None

        self.hook_server(hook)
        rows = self.trait_cmd('set', '--amend', '--trait', self.marker,
                              use_json=True)
        self.assertEqual(3, len(puts))  # ours, the other's, ours again
        self.assertEqual(sorted([self.own[second], SSE, AVX, self.marker]),
                         self.traits_of(second))
        self.assertEqual(self.traits_of(second),
                         self.by_provider(rows)[second])
        for rp in (first, third):
            self.assertEqual(sorted([self.own[rp], SSE, self.marker]),
                             self.traits_of(rp))

    def test_persistent_failure_on_one_member(self):
        first, second, third = self.members
        seen = self.fail_trait_puts_to(second, (
            '503 Service Unavailable',
            [('Content-Type', 'text/html'),
             ('x-openstack-request-id', 'req-proxy')],
            b'<html>\n<h1>Service Unavailable</h1>\n</html>\n'))
        before = self.state()
        result = self.trait_cmd('set', '--amend', '--trait', self.marker,
                                may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertEqual(bulk.MAX_ATTEMPTS, len(seen))
        names = {rp: self.http('GET', '/resource_providers/' + rp,
                               expect=200).json()['name']
                 for rp in self.members}
        self.assertEqual(
            ['Failed to set traits for resource provider %s: Placement '
             'server error: <html> (HTTP 503) (Request-ID: req-proxy).'
             % second,
             'Changed: %s. The failed resource providers were not changed.'
             % ', '.join('%s (%s)' % (names[rp], rp)
                         for rp in self.listed() if rp != second),
             'Failed to set traits for 1 of 3 resource providers.'],
            result.stderr.strip().splitlines())
        self.assertEqual(before[second], self.state()[second])
        for rp in (first, third):
            self.assertIn(self.marker, self.traits_of(rp))

    def test_empty_aggregate(self):
        empty = str(uuid.uuid4())
        for action in (['set', '--trait', AVX], ['delete', '--trait', AVX]):
            self.assertCommandFails(
                ['resource', 'provider', 'trait', action[0], empty,
                 '--aggregate'] + action[1:],
                'No resource providers found in aggregate with uuid %s.'
                % empty)

    # --- delete

    def test_delete_removes_only_the_traits_named(self):
        first, second, third = self.members
        self.set_provider_traits(first, [self.own[first], SSE, self.marker])
        self.set_provider_traits(third, [self.marker])
        before = self.state()
        rows = self.trait_cmd('delete', '--trait', self.marker,
                              '--trait', SSE, '--yes', use_json=True)
        expected = {first: [self.own[first]], second: [self.own[second]]}
        self.assertEqual(expected, self.by_provider(rows))
        self.assertEqual(dict(expected, **{third: []}),
                         {rp: self.traits_of(rp) for rp in self.members})
        after = self.state()
        for rp in self.members:
            self.assertEqual(before[rp][0] + 1, after[rp][0])
        self.assertEqual(before[self.outsider], after[self.outsider])
        # Again: nothing left to remove, so nothing is written.
        rows = self.trait_cmd('delete', '--trait', self.marker,
                              use_json=True)
        self.assertEqual(expected, self.by_provider(rows))
        self.assertEqual(after, self.state())

    def test_delete_needs_trait_with_aggregate(self):
        before = self.state()
        result = self.assertCommandFails(
            ['resource', 'provider', 'trait', 'delete', self.agg,
             '--aggregate'], '--aggregate needs --trait', code=2)
        self.assertEqual('', result.stdout)
        self.assertEqual(before, self.state())

    def test_delete_unknown_trait_is_refused(self):
        missing = self.unique_custom('CUSTOM_FT_NOPE')
        before = self.state()
        self.assertCommandFails(
            ['resource', 'provider', 'trait', 'delete', self.agg,
             '--aggregate', '--trait', SSE, '--trait', missing],
            'No such trait(s): %s.' % missing)
        self.assertEqual(before, self.state())

    # --- one provider, with the new options

    def test_one_provider_amend_and_delete_named(self):
        first = self.members[0]
        rows = self.openstack(['resource', 'provider', 'trait', 'set', first,
                               '--amend', '--trait', AVX], use_json=True)
        self.assertEqual(sorted([self.own[first], SSE, AVX]),
                         sorted(row['name'] for row in rows))
        self.assertEqual(['name'], list(rows[0]))
        rows = self.openstack(['resource', 'provider', 'trait', 'delete',
                               first, '--trait', SSE], use_json=True)
        self.assertEqual(sorted([self.own[first], AVX]),
                         sorted(row['name'] for row in rows))
        self.assertEqual(sorted([self.own[first], AVX]),
                         self.traits_of(first))
        before = self.state()
        rows = self.openstack(['resource', 'provider', 'trait', 'delete',
                               first, '--dry-run'], use_json=True)
        self.assertEqual([], rows)
        self.assertEqual(before, self.state())


class TestTraitAggregate_1_6(TraitAggregateTests, base.FunctionalTestCase):
    VERSION = '1.6'


class TestTraitAggregate_1_39(TraitAggregateTests, base.FunctionalTestCase):
    VERSION = '1.39'


class TestTraitAggregateVersions(base.FunctionalTestCase):

    def test_explicit_old_version(self):
        # --aggregate needs 1.3 (member_of); traits themselves need 1.6.
        for argv in (['set', '--trait', AVX], ['delete', '--trait', AVX]):
            result = self.assertCommandFails(
                ['resource', 'provider', 'trait', argv[0], str(uuid.uuid4()),
                 '--aggregate'] + argv[1:],
                base.GATE % ('1.2', '1.6'), version='1.2')
            self.assertEqual(1, len(result.stderr.strip().splitlines()))

    def test_negotiated_with_an_old_server(self):
        agg = str(uuid.uuid4())
        rp = self.create_provider()['uuid']
        self.set_provider_aggregates(rp, [agg])
        self.pretend_server_max('1.5')
        calls = self.record_requests()
        self.assertCommandFails(
            ['resource', 'provider', 'trait', 'set', agg, '--aggregate',
             '--amend', '--trait', AVX], base.GATE % ('1.5', '1.6'))
        # Only the negotiation was sent.
        self.assertEqual(['GET'], [method for method, _, _ in calls])

    def test_negotiated(self):
        agg = str(uuid.uuid4())
        rp = self.create_provider()['uuid']
        self.set_provider_aggregates(rp, [agg])
        calls = self.record_requests()
        rows = json.loads(self.openstack(
            ['resource', 'provider', 'trait', 'set', agg, '--aggregate',
             '--amend', '--trait', AVX, '-f', 'json']))
        self.assertEqual([{'resource_provider': rp, 'name': AVX}], rows)
        self.assertEqual(
            [('GET', '/', 'placement 1.39'),
             ('GET', '/resource_providers?member_of=' + agg,
              'placement 1.39'),
             # The sharing providers, left alone.
             ('GET', '/resource_providers?member_of=%s&required='
              'MISC_SHARES_VIA_AGGREGATE' % agg, 'placement 1.39'),
             ('GET', '/resource_providers/%s/traits' % rp, 'placement 1.39'),
             ('PUT', '/resource_providers/%s/traits' % rp,
              'placement 1.39')],
            [(m, u.replace(self.placement.endpoint, ''), v)
             for m, u, v in calls])
