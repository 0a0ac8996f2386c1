# SPDX-License-Identifier: Apache-2.0
"""``allocation candidate list`` against our server, version by version.

The same tests run at 1.10 (the command appears; allocations as a list),
1.12 (as a dict), 1.17 (traits column, --required), 1.25 (groups), 1.29
(nested trees), 1.33 (named groups), 1.34 (mappings), 1.35
(root_required), 1.36 (same_subtree) and 1.39 (any-of traits); each option
either works or fails with the client's gate text below its version.

Every query includes a resource class made for the test, so that the
providers of other tests (which share the database outside the
in-process mode) never show up.
"""

import json
import uuid

from osc_placement import version
from tests.functional import base

AVX = 'HW_CPU_X86_AVX'
SSE = 'HW_CPU_X86_SSE'


def columns_at(ver, mappings=False):
    columns = ['#', 'allocation', 'resource provider',
               'inventory used/capacity']
    if version.at_least(ver, '1.17'):
        columns.append('traits')
    if mappings:
        columns.append('mappings')
    return columns


def pieces(text):
    return frozenset(text.split(',')) if text else frozenset()


class World:
    """Two compute nodes in two aggregates, scoped by a custom class.

    cn1: VCPU 2/8 used, MEMORY_MB 4096, RC 10, traits AVX and a custom
    one, aggregate a; cn2: VCPU 4, MEMORY_MB 2048, RC 10, trait SSE,
    aggregate b.
    """

    def __init__(self, test):
        self.rc = test.create_resource_class()
        self.trait = test.create_trait()
        self.agg_a, self.agg_b = str(uuid.uuid4()), str(uuid.uuid4())
        self.cn1 = test.create_provider(test.unique('cn1'))['uuid']
        test.set_inventory(self.cn1, {'VCPU': 8, 'MEMORY_MB': 4096,
                                      self.rc: 10})
        test.set_provider_traits(self.cn1, [AVX, self.trait])
        test.set_provider_aggregates(self.cn1, [self.agg_a])
        self.cn2 = test.create_provider(test.unique('cn2'))['uuid']
        test.set_inventory(self.cn2, {'VCPU': 4, 'MEMORY_MB': 2048,
                                      self.rc: 10})
        test.set_provider_traits(self.cn2, [SSE])
        test.set_provider_aggregates(self.cn2, [self.agg_b])
        test.allocate(str(uuid.uuid4()), {self.cn1: {'VCPU': 2}})


class CandidateTests:
    """Mixed into a FunctionalTestCase with an explicit VERSION."""

    _world = None

    def world(self):
        if self._world is None:
            self._world = World(self)
        return self._world

    def since(self, first):
        return version.at_least(self.VERSION, first)

    def candidates(self, *options, **kwargs):
        """Run the command; return {frozenset of (rp, allocation)}.

        Rows are also checked for the columns of VERSION, and a candidate
        number must cover the rows of one candidate.
        """
        w = self.world()
        argv = ['allocation', 'candidate', 'list']
        if kwargs.get('scoped', True):
            argv += ['--resource', '%s=1' % w.rc]
        rows = self.openstack(argv + list(options), use_json=True)
        expected = columns_at(self.VERSION, '--mappings' in options)
        by_number = {}
        for row in rows:
            self.assertEqual(expected, list(row))
            by_number.setdefault(row['#'], set()).add(
                (row['resource provider'], pieces(row['allocation'])))
        self.assertEqual(list(range(1, len(by_number) + 1)),
                         sorted(by_number))
        self.last_rows = rows
        return {frozenset(c) for c in by_number.values()}

    def alone(self, rp, *allocation):
        """A candidate served by ``rp`` alone, RC=1 plus ``allocation``."""
        return frozenset([(rp, frozenset(
            ('%s=1' % self.world().rc,) + allocation))])

    def assertGate(self, options, first):
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU=1']
            + list(options), base.GATE % (self.VERSION, first))

    def test_rows_and_columns(self):
        w = self.world()
        self.assertEqual({self.alone(w.cn1, 'VCPU=1'),
                          self.alone(w.cn2, 'VCPU=1')},
                         self.candidates('--resource', 'VCPU=1'))
        rows = {row['resource provider']: row for row in self.last_rows}
        # Before 1.27 a summary holds only the classes asked for.
        cn1 = {'VCPU=2/8', '%s=0/10' % w.rc}
        cn2 = {'VCPU=0/4', '%s=0/10' % w.rc}
        if self.since('1.27'):
            cn1.add('MEMORY_MB=0/4096')
            cn2.add('MEMORY_MB=0/2048')
        self.assertEqual(cn1, pieces(rows[w.cn1]['inventory used/capacity']))
        self.assertEqual(cn2, pieces(rows[w.cn2]['inventory used/capacity']))
        if self.since('1.17'):
            self.assertEqual({AVX, w.trait}, pieces(rows[w.cn1]['traits']))
            self.assertEqual({SSE}, pieces(rows[w.cn2]['traits']))

    def test_capacity_is_respected(self):
        w = self.world()
        # cn1 has 6 VCPU left, cn2 4.
        self.assertEqual({self.alone(w.cn1, 'VCPU=5')},
                         self.candidates('--resource', 'VCPU=5'))
        self.assertEqual(set(), self.candidates('--resource', 'VCPU=7'))

    def test_limit(self):
        if not self.since('1.16'):
            return self.assertGate(['--limit', '1'], '1.16')
        self.assertEqual(1, len(self.candidates('--limit', '1')))
        self.assertEqual(2, len(self.candidates('--limit', '5')))

    def test_required_and_forbidden_traits(self):
        if not self.since('1.17'):
            return self.assertGate(['--required', AVX], '1.17')
        w = self.world()
        self.assertEqual({self.alone(w.cn1)},
                         self.candidates('--required', AVX))
        self.assertEqual({self.alone(w.cn1)},
                         self.candidates('--required', AVX,
                                         '--required', w.trait))
        self.assertEqual(set(), self.candidates('--required', AVX,
                                                '--required', SSE))
        if not self.since('1.22'):
            return self.assertGate(['--forbidden', AVX], '1.22')
        self.assertEqual({self.alone(w.cn2)},
                         self.candidates('--forbidden', AVX))
        any_of = '%s,%s' % (AVX, SSE)
        if not self.since('1.39'):
            return self.assertGate(['--required', any_of], '1.39')
        self.assertEqual({self.alone(w.cn1), self.alone(w.cn2)},
                         self.candidates('--required', any_of))
        self.assertEqual({self.alone(w.cn2)},
                         self.candidates('--required', any_of,
                                         '--forbidden', w.trait))

    def test_member_of(self):
        if not self.since('1.21'):
            return self.assertGate(['--member-of', str(uuid.uuid4())],
                                   '1.21')
        w = self.world()
        self.assertEqual({self.alone(w.cn1)},
                         self.candidates('--member-of', w.agg_a))
        self.assertEqual({self.alone(w.cn1), self.alone(w.cn2)},
                         self.candidates('--member-of',
                                         '%s,%s' % (w.agg_a, w.agg_b)))
        result = self.openstack(
            ['allocation', 'candidate', 'list', '--resource', '%s=1' % w.rc,
             '--aggregate-uuid', w.agg_b, '-f', 'json'], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn('The --aggregate-uuid option is deprecated, please '
                      'use --member-of instead.', result.stderr)
        self.assertEqual([w.cn2], [row['resource provider'] for row in
                                   json.loads(result.stdout)])
        twice = ['--member-of', w.agg_a, '--member-of', w.agg_b]
        if not self.since('1.24'):
            self.assertCommandFails(
                ['allocation', 'candidate', 'list', '--resource',
                 '%s=1' % w.rc] + twice,
                'Multiple member_of parameters are not supported (HTTP 400)')
        else:
            # Every occurrence must hold.
            self.assertEqual(set(), self.candidates(*twice))
        if not self.since('1.32'):
            return self.assertGate(['--member-of', '!' + w.agg_a], '1.32')
        self.assertEqual({self.alone(w.cn2)},
                         self.candidates('--member-of', '!' + w.agg_a))
        self.assertEqual(set(), self.candidates(
            '--member-of', '!%s,%s' % (w.agg_a, w.agg_b)))

    def test_granular_groups(self):
        if not self.since('1.25'):
            return self.assertGate(['--group', '1', '--resource', 'VCPU=1'],
                                   '1.25')
        w = self.world()
        groups = ['--group', '1', '--resource', 'VCPU=3',
                  '--group', '2', '--resource', 'VCPU=3']
        both = {self.alone(w.cn1, 'VCPU=6')}
        # cn2 (4 VCPU) cannot serve both groups; cn1 (6 left) can.
        self.assertEqual(both, self.candidates(*groups))
        self.assertEqual(both, self.candidates(*groups, '--group-policy',
                                               'none'))
        # Isolated groups need two providers of one tree; there are none.
        self.assertEqual(set(), self.candidates(*groups, '--group-policy',
                                                'isolate'))
        self.assertEqual({self.alone(w.cn2, 'VCPU=1')}, self.candidates(
            '--group', '1', '--resource', 'VCPU=1', '--required', SSE))
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU=1',
             '--group', '1', '--required', AVX],
            '--resource should be provided in group 1')
        for name in ('acc_1', '0', '01'):
            # Before 1.33 only [1-9][0-9]* suffixes are numbers.
            named = ['--group', name, '--resource', 'VCPU=1']
            if not self.since('1.33'):
                self.assertGate(named, '1.33')
                continue
            self.assertEqual({self.alone(w.cn1, 'VCPU=1'),
                              self.alone(w.cn2, 'VCPU=1')},
                             self.candidates(*named))

    def test_nested_providers(self):
        w = self.world()
        gpu = self.create_provider(self.unique('gpu'), parent=w.cn2)['uuid']
        self.set_inventory(gpu, {'VGPU': 2, w.rc: 1})
        found = self.candidates('--resource', 'VGPU=1')
        gpu_alone = frozenset([(gpu, frozenset(['VGPU=1', '%s=1' % w.rc]))])
        if not self.since('1.29'):
            # A child may serve a candidate alone, but one candidate may
            # not take from two providers of a tree.
            self.assertEqual({gpu_alone}, found)
            return
        root_and_child = frozenset([(w.cn2, frozenset(['%s=1' % w.rc])),
                                    (gpu, frozenset(['VGPU=1']))])
        self.assertEqual({gpu_alone, root_and_child}, found)
        # cn2 has SSE: forbidding it leaves the child alone.
        self.assertEqual({gpu_alone},
                         self.candidates('--resource', 'VGPU=1',
                                         '--forbidden', SSE))

    def test_sharing_provider(self):
        w = self.world()
        disk = self.create_provider(self.unique('disk'))['uuid']
        self.set_inventory(disk, {'DISK_GB': 100})
        self.set_provider_traits(disk, ['MISC_SHARES_VIA_AGGREGATE'])
        self.set_provider_aggregates(disk, [w.agg_a])
        # Only cn1 shares an aggregate with the disk. Below 1.12 the
        # client reads the two providers from a list.
        found = self.candidates('--resource', 'DISK_GB=10')
        self.assertEqual({frozenset([(w.cn1, frozenset(['%s=1' % w.rc])),
                                     (disk, frozenset(['DISK_GB=10']))])},
                         found)
        rows = {row['resource provider']: row for row in self.last_rows}
        self.assertEqual('DISK_GB=0/100',
                         rows[disk]['inventory used/capacity'])
        if self.since('1.17'):
            self.assertEqual('MISC_SHARES_VIA_AGGREGATE',
                             rows[disk]['traits'])

    def test_in_tree(self):
        if not self.since('1.31'):
            return self.assertGate(['--in-tree', str(uuid.uuid4())], '1.31')
        w = self.world()
        self.assertEqual({self.alone(w.cn2)},
                         self.candidates('--in-tree', w.cn2))
        # Per group: the unnamed RC may come from anywhere, VCPU=5 only
        # from cn1's tree (cn2 has 4).
        self.assertEqual(set(), self.candidates(
            '--group', '1', '--resource', 'VCPU=5', '--in-tree', w.cn2))
        self.assertEqual({self.alone(w.cn1, 'VCPU=5')}, self.candidates(
            '--group', '1', '--resource', 'VCPU=5', '--in-tree', w.cn1))

    def test_mappings(self):
        if not self.since('1.34'):
            return self.assertGate(['--mappings'], '1.34')
        w = self.world()
        options = ['--group', 'x', '--resource', 'VCPU=1', '--required', AVX]
        found = self.candidates(*options, '--mappings')
        self.assertEqual({frozenset([(w.cn1, frozenset(
            ['VCPU=1', '%s=1' % w.rc]))])}, found)
        self.assertEqual([['', 'x']], [sorted(row['mappings'])
                                       for row in self.last_rows])
        table = self.openstack(['allocation', 'candidate', 'list',
                                '--resource', '%s=1' % w.rc] + options
                               + ['--mappings'])
        self.assertIn(' mappings ', table.splitlines()[1])
        self.assertTrue('(unnamed),x' in table or 'x,(unnamed)' in table,
                        table)
        # Without --mappings the columns stay the default ones.
        self.candidates(*options)

    def test_root_required(self):
        if not self.since('1.35'):
            return self.assertGate(['--root-required', AVX], '1.35')
        w = self.world()
        self.assertEqual({self.alone(w.cn1)},
                         self.candidates('--root-required', w.trait))
        self.assertEqual({self.alone(w.cn2)},
                         self.candidates('--root-required', '!' + w.trait))
        self.assertEqual({self.alone(w.cn1)}, self.candidates(
            '--root-required', AVX, '--root-required', '!' + SSE))
        self.assertEqual(set(), self.candidates(
            '--root-required', '%s,%s' % (AVX, SSE)))

    def test_same_subtree(self):
        if not self.since('1.36'):
            return self.assertGate(['--same-subtree', '1,2'], '1.36')
        w = self.world()
        gpu = self.create_provider(self.unique('gpu'), parent=w.cn1)['uuid']
        self.set_inventory(gpu, {'VGPU': 2})
        self.set_provider_traits(gpu, ['HW_GPU_API_VULKAN'])
        # Group 2 takes nothing; it only says where group 1 must be.
        found = self.candidates(
            '--group', '1', '--resource', 'VGPU=1',
            '--group', '2', '--required', 'HW_GPU_API_VULKAN',
            '--same-subtree', '1,2', '--mappings')
        self.assertEqual({frozenset([(w.cn1, frozenset(['%s=1' % w.rc])),
                                     (gpu, frozenset(['VGPU=1']))])}, found)
        self.assertEqual(
            {(w.cn1, ('',)), (gpu, ('1', '2'))},
            {(row['resource provider'], tuple(sorted(row['mappings'])))
             for row in self.last_rows})

    def test_errors(self):
        w = self.world()
        self.assertCommandFails(
            ['allocation', 'candidate', 'list'],
            'At least one --resource must be specified.')
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU'],
            'Arguments to --resource must be of form '
            '<resource_class>=<value>')
        missing = self.unique_custom('CUSTOM_NOPE')
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource',
             '%s=1' % missing],
            'Invalid resource class in resources parameter: No such '
            'resource class %s. (HTTP 400)' % missing)
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource',
             '%s=x' % w.rc], '(HTTP 400)')
        base_cmd = ['allocation', 'candidate', 'list', '--resource',
                    '%s=1' % w.rc]
        if self.since('1.17'):
            self.assertCommandFails(
                base_cmd + ['--required', missing],
                'No such trait(s): %s. (HTTP 400)' % missing)
        if self.since('1.21'):
            self.assertCommandFails(
                base_cmd + ['--member-of', 'not-a-uuid'],
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: not-a-uuid "
                "(HTTP 400)")
        if self.since('1.31'):
            # An unknown tree is no error: there is just nothing in it.
            self.assertEqual(set(), self.candidates(
                '--in-tree', str(uuid.uuid4())))
        argparse_errors = [
            (['--group-policy', 'all'], "argument --group-policy: invalid "
             "choice: 'all' (choose from 'none', 'isolate')"),
            (['--limit', 'x'], "argument --limit: invalid int value: 'x'"),
            (['--member-of', w.agg_a, '--aggregate-uuid', w.agg_b],
             'argument --aggregate-uuid: not allowed with argument '
             '--member-of'),
        ]
        for options, message in argparse_errors:
            self.assertCommandFails(
                ['allocation', 'candidate', 'list', '--resource', 'VCPU=1']
                + options, message, code=2)


class TestCandidates1_10(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.10'


class TestCandidates1_12(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.12'


class TestCandidates1_17(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.17'


class TestCandidates1_25(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.25'


class TestCandidates1_29(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.29'


class TestCandidates1_33(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.33'


class TestCandidates1_34(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.34'


class TestCandidates1_35(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.35'


class TestCandidates1_36(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.36'


class TestCandidates1_39(CandidateTests, base.FunctionalTestCase):
    VERSION = '1.39'


class TestCandidatesGateAndNegotiation(base.FunctionalTestCase):

    def test_needs_1_10(self):
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU=1'],
            base.GATE % ('1.9', '1.10'), version='1.9')

    def test_table(self):
        rp = self.compute_node()
        rc = self.create_resource_class()
        self.set_inventory(rp, {'VCPU': 8, rc: 4})
        table = self.openstack(['allocation', 'candidate', 'list',
                                '--resource', '%s=1' % rc], version='1.39')
        lines = table.splitlines()
        self.assertEqual(
            ['#', 'allocation', 'resource provider',
             'inventory used/capacity', 'traits'],
            [cell.strip() for cell in lines[1].strip('|').split('|')])
        self.assertEqual(
            ['1', '%s=1' % rc, rp, 'VCPU=0/8,%s=0/4' % rc, ''],
            [cell.strip() for cell in lines[3].strip('|').split('|')])
        self.assertEqual(5, len(lines))
        self.assertEqual('\n', self.openstack(
            ['allocation', 'candidate', 'list', '--resource',
             '%s=5' % rc], version='1.39'))

    def test_negotiated_version_is_the_maximum(self):
        rp = self.compute_node()
        rc = self.create_resource_class()
        self.set_inventory(rp, {'VCPU': 8, rc: 4})
        self.set_provider_traits(rp, [AVX])
        calls = self.record_requests()
        result = self.openstack(
            ['allocation', 'candidate', 'list', '--resource',
             '%s=1' % rc, '--required', '%s,%s' % (AVX, SSE), '-f', 'json'],
            may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(['1.39', '1.39'], [sent.version for sent in calls])
        self.assertEqual([{'#': 1, 'allocation': '%s=1' % rc,
                           'resource provider': rp,
                           'inventory used/capacity': 'VCPU=0/8,%s=0/4' % rc,
                           'traits': AVX}],
                         json.loads(result.stdout))
