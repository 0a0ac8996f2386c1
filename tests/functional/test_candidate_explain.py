# SPDX-License-Identifier: Apache-2.0
"""``openstack allocation candidate explain`` on the classic layouts.

Every verdict is checked against ``allocation candidate list`` for the
same request, through the same shell: a tree is a candidate exactly when
the list has a row for one of its providers. The reasons are checked by
the checks they name.
"""

import json
import uuid

from tests.functional import base

SHARES = 'MISC_SHARES_VIA_AGGREGATE'
DISABLED = 'COMPUTE_STATUS_DISABLED'


class ExplainTests(base.FunctionalTestCase):

    def explain(self, *options, **kwargs):
        """explain's rows; with --resource-provider, its exit status must
        be 0 when a tree named is a candidate, 3 when none is."""
        result = self.openstack(['allocation', 'candidate', 'explain']
                                + list(options) + ['-f', 'json'],
                                may_fail=True, **kwargs)
        if result.code not in (0, 3):
            raise base.CommandFailed(options, result)
        rows = json.loads(result.stdout)
        if '--resource-provider' in options:
            verdicts = [row['result'] == 'pass' for row in rows
                        if row['check'] == 'candidate']
            self.assertEqual(0 if any(verdicts) else 3, result.code)
        else:
            self.assertEqual(0, result.code, result.stderr)
        return rows

    def listed_providers(self, *options):
        rows = self.openstack(['allocation', 'candidate', 'list']
                              + list(options), use_json=True)
        return {row['resource provider'] for row in rows}

    def host(self, prefix='cn', **inventory):
        rp = self.create_provider(self.unique(prefix))
        self.set_inventory(rp['uuid'], inventory)
        return rp

    def assertVerdicts(self, options, trees):
        """Explain each tree (``{name: [uuids of its providers]}``) and
        compare with what the list returns for the same options."""
        listed = self.listed_providers(*options)
        asked = []
        for name in trees:
            asked += ['--resource-provider', name]
        rows = self.explain(*(list(options) + asked))
        verdicts = {row['tree']: row['result'] == 'pass' for row in rows
                    if row['check'] == 'candidate'}
        expected = {name: bool(set(uuids) & listed)
                    for name, uuids in trees.items()}
        self.assertEqual(expected, verdicts)
        return rows

    @staticmethod
    def failed(rows, tree=None):
        return [(row['provider'], row['group'], row['check'])
                for row in rows if row['result'] == 'fail'
                and row['check'] != 'candidate'
                and (tree is None or row['tree'] == tree)]

    # --- layouts

    def test_flat_hosts_capacity_and_units(self):
        roomy = self.host(VCPU={'total': 8},
                          MEMORY_MB={'total': 4096, 'step_size': 512})
        full = self.host(VCPU={'total': 2, 'reserved': 1},
                         MEMORY_MB={'total': 4096, 'max_unit': 1024})
        options = ['--resource', 'VCPU=2', '--resource', 'MEMORY_MB=2048']
        rows = self.assertVerdicts(options, {
            roomy['name']: [roomy['uuid']], full['name']: [full['uuid']]})
        self.assertEqual([(full['name'], '(unnamed)', 'capacity'),
                          (full['name'], '(unnamed)', 'max_unit'),
                          ('', '(unnamed)', 'class takers'),
                          ('', '(unnamed)', 'class takers')],
                         self.failed(rows, full['name']))
        capacity = [row for row in rows if row['check'] == 'capacity'][0]
        self.assertEqual('VCPU=2', capacity['wanted'])
        self.assertEqual('free 1 (total 2, reserved 1, allocation_ratio '
                         '1.0, used 0)', capacity['found'])
        self.assertEqual([], self.failed(rows, roomy['name']))
        # A step_size the amount is no multiple of.
        rows = self.assertVerdicts(
            ['--resource', 'MEMORY_MB=1000'],
            {roomy['name']: [roomy['uuid']]})
        self.assertIn((roomy['name'], '(unnamed)', 'step_size'),
                      self.failed(rows))

    def test_used_capacity_and_a_disabled_host(self):
        host = self.host(VCPU={'total': 4})
        other = self.host(VCPU={'total': 4})
        self.allocate(str(uuid.uuid4()), {host['uuid']: {'VCPU': 3}})
        self.set_provider_traits(other['uuid'], [DISABLED])
        options = ['--resource', 'VCPU=2', '--forbidden', DISABLED]
        rows = self.assertVerdicts(options, {
            host['name']: [host['uuid']], other['name']: [other['uuid']]})
        used = [row for row in rows if row['check'] == 'capacity']
        self.assertEqual(['free 1 (total 4, reserved 0, allocation_ratio '
                          '1.0, used 3)'], [row['found'] for row in used])
        disabled = [row for row in rows if row['check'] == 'forbidden trait']
        self.assertEqual([(other['name'], '!' + DISABLED, 'present')],
                         [(row['provider'], row['wanted'], row['found'])
                          for row in disabled])

    def numa_host(self):
        """A root with disk and two NUMA nodes with CPU and memory; a GPU
        under node 0."""
        root = self.host('numa-host', DISK_GB={'total': 100})
        nodes = []
        for _ in range(2):
            node = self.create_provider(self.unique('numa'),
                                        parent=root['uuid'])
            self.set_inventory(node['uuid'], {'VCPU': 4,
                                              'MEMORY_MB': 2048})
            self.set_provider_traits(node['uuid'], ['HW_NUMA_ROOT'])
            nodes.append(node)
        gpu = self.create_provider(self.unique('gpu'), parent=nodes[0]['uuid'])
        self.set_inventory(gpu['uuid'], {'VGPU': 2})
        return root, nodes, gpu

    def test_numa_host(self):
        root, nodes, gpu = self.numa_host()
        tree = {root['name']: [root['uuid'], gpu['uuid']]
                + [n['uuid'] for n in nodes]}
        rows = self.assertVerdicts(
            ['--resource', 'VCPU=2', '--resource', 'MEMORY_MB=1024',
             '--resource', 'DISK_GB=10'], tree)
        self.assertEqual([], self.failed(rows))
        # No NUMA node has 6 VCPU: the class has no taker.
        rows = self.assertVerdicts(['--resource', 'VCPU=6'], tree)
        self.assertEqual(
            sorted([(n['name'], '(unnamed)', 'capacity') for n in nodes]
                   + [('', '(unnamed)', 'class takers')]
                   + [(p, '(unnamed)', 'class')
                      for p in [root['name'], gpu['name']]]),
            sorted(self.failed(rows)))

    def test_granular_isolate_and_same_subtree(self):
        root, nodes, gpu = self.numa_host()
        tree = {root['name']: [root['uuid'], gpu['uuid']]
                + [n['uuid'] for n in nodes]}
        # Two groups of 3 VCPU fit, one per node, only without isolate
        # onto the same node... and with isolate on the two nodes.
        groups = ['--group', '1', '--resource', 'VCPU=3',
                  '--group', '2', '--resource', 'VCPU=3']
        self.assertVerdicts(groups + ['--group-policy', 'isolate'], tree)
        # Three isolated groups need three nodes.
        rows = self.assertVerdicts(
            groups + ['--group', '3', '--resource', 'VCPU=1',
                      '--group-policy', 'isolate'], tree)
        self.assertIn(('', '', 'group_policy'), self.failed(rows))
        # The GPU and 4 VCPU in one subtree: node 0 has the GPU but its
        # VCPU are used; node 1 has VCPU but no GPU.
        self.allocate(str(uuid.uuid4()), {nodes[0]['uuid']: {'VCPU': 2}})
        subtree = ['--group', 'cpu', '--resource', 'VCPU=4',
                   '--group', 'gpu', '--resource', 'VGPU=1',
                   '--same-subtree', 'cpu,gpu']
        rows = self.assertVerdicts(subtree, tree)
        self.assertIn(('', 'cpu,gpu', 'same_subtree'), self.failed(rows))
        rows = self.assertVerdicts(
            ['--group', 'cpu', '--resource', 'VCPU=2',
             '--group', 'gpu', '--resource', 'VGPU=1',
             '--same-subtree', 'cpu,gpu'], tree)
        self.assertEqual([], self.failed(rows))

    def test_sharing_disk(self):
        agg = str(uuid.uuid4())
        served = self.host('served', VCPU={'total': 4})
        alone = self.host('alone', VCPU={'total': 4})
        disk = self.host('disk', DISK_GB={'total': 1000})
        self.set_provider_traits(disk['uuid'], [SHARES])
        self.set_provider_aggregates(disk['uuid'], [agg])
        self.set_provider_aggregates(served['uuid'], [agg])
        options = ['--resource', 'VCPU=1', '--resource', 'DISK_GB=100']
        rows = self.assertVerdicts(options, {
            served['name']: [served['uuid']], alone['name']: [alone['uuid']],
            disk['name']: [disk['uuid']]})
        # The disk could have served the lone host, but shares no
        # aggregate with it.
        self.assertIn((disk['name'], '', 'sharing'),
                      self.failed(rows, alone['name']))
        # member_of an aggregate the disk is not in: the served host is in
        # it, but the disk can no longer serve it.
        other = str(uuid.uuid4())
        self.set_provider_aggregates(served['uuid'], [agg, other])
        rows = self.assertVerdicts(options + ['--member-of', other], {
            served['name']: [served['uuid']]})
        self.assertIn((disk['name'], '(unnamed)', 'member_of'),
                      self.failed(rows))

    def test_sharing_providers_with_room_read_once(self):
        """Two trees missing the same class name the same sharing
        provider; its listing and its aggregates are read once."""
        disk = self.host('disk', DISK_GB={'total': 1000})
        self.set_provider_traits(disk['uuid'], [SHARES])
        self.set_provider_aggregates(disk['uuid'], [str(uuid.uuid4())])
        hosts = [self.host(VCPU={'total': 4}) for _ in range(2)]
        calls = self.record_requests()
        rows = self.explain('--resource', 'VCPU=1', '--resource',
                            'DISK_GB=100', '--resource-provider',
                            hosts[0]['name'], '--resource-provider',
                            hosts[1]['name'])
        self.assertEqual([(disk['name'], '', 'sharing')] * 2,
                         [(p, g, c) for p, g, c in self.failed(rows)
                          if c == 'sharing'])
        urls = [url for _method, url, _version in calls]
        self.assertEqual(1, len([u for u in urls
                                 if 'resources=DISK_GB' in u]))
        self.assertEqual(1, len([u for u in urls if u.endswith(
            '/%s/aggregates' % disk['uuid'])]))

    def test_root_required_and_any_traits(self):
        root, nodes, gpu = self.numa_host()
        tree = {root['name']: [root['uuid'], gpu['uuid']]
                + [n['uuid'] for n in nodes]}
        marker = self.create_trait()
        rows = self.assertVerdicts(
            ['--resource', 'VCPU=1', '--root-required', marker], tree)
        self.assertEqual([(root['name'], '', 'root_required')],
                         self.failed(rows))
        self.set_provider_traits(root['uuid'], [marker])
        self.assertVerdicts(
            ['--resource', 'VCPU=1', '--root-required', marker], tree)
        # Any of two traits (1.39): a node has one of them.
        avx = 'HW_CPU_X86_AVX2'
        self.set_provider_traits(nodes[1]['uuid'], ['HW_NUMA_ROOT', avx])
        any_of = ['--group', '1', '--resource', 'VCPU=1',
                  '--required', '%s,HW_CPU_X86_SSE42' % avx]
        self.assertVerdicts(any_of, tree)
        rows = self.assertVerdicts(
            ['--group', '1', '--resource', 'VCPU=1', '--required',
             'HW_CPU_X86_SSE42,HW_CPU_X86_SSE41'], tree)
        self.assertIn(('', '1', 'group'), self.failed(rows))

    def test_in_tree(self):
        first = self.host(VCPU={'total': 4})
        second = self.host(VCPU={'total': 4})
        # The provider of --in-tree by UUID or by name, as everywhere.
        for named in (first['uuid'], first['name']):
            rows = self.assertVerdicts(
                ['--resource', 'VCPU=1', '--in-tree', named],
                {first['name']: [first['uuid']],
                 second['name']: [second['uuid']]})
            self.assertEqual([(second['name'], '(unnamed)', 'in_tree'),
                              ('', '(unnamed)', 'class takers')],
                             self.failed(rows, second['name']))

    def test_all_checks_lists_passes(self):
        host = self.host(VCPU={'total': 4})
        rows = self.explain('--resource', 'VCPU=1', '--resource-provider',
                            host['uuid'], '--all-checks')
        checks = [(row['check'], row['result']) for row in rows]
        self.assertEqual([('candidate', 'pass'), ('capacity', 'pass'),
                          ('min_unit', 'pass'), ('max_unit', 'pass'),
                          ('step_size', 'pass'), ('class takers', 'pass')],
                         checks)

    # --- the funnel

    def test_funnel_names_the_criterion_that_empties_the_set(self):
        rc = self.create_resource_class()
        hosts = [self.host(**{rc: {'total': 4}}) for _ in range(3)]
        self.set_provider_traits(hosts[0]['uuid'], [DISABLED])
        self.allocate(str(uuid.uuid4()), {hosts[1]['uuid']: {rc: 4}})
        agg = str(uuid.uuid4())
        self.set_provider_aggregates(hosts[0]['uuid'], [agg])
        rows = self.explain('--resource', '%s=2' % rc, '--forbidden',
                            DISABLED, '--member-of', agg)
        steps = [(row['criterion'], row['trees'], row['note'])
                 for row in rows[1:]]
        self.assertEqual([
            ('room for %s=2' % rc, 2, ''),
            ('in aggregate %s' % agg, 1, ''),
            ('without trait %s' % DISABLED, 0, 'empties the set'),
            ('allocation candidates', 0, 'no candidates')], steps)
        self.assertEqual([2, 1], [row['providers'] for row in rows[1:3]])
        self.assertEqual('all providers', rows[0]['criterion'])

    def test_funnel_carries_the_trees_across_groups(self):
        """Each group alone keeps a tree, a different one: together they
        keep none, and the first criterion of the second group says so."""
        rc = self.create_resource_class()
        first = self.host(**{rc: {'total': 4}})
        second = self.host(**{rc: {'total': 4}})
        trait = self.create_trait()
        self.set_provider_traits(first['uuid'], [trait])
        rows = self.explain('--group', '1', '--resource', '%s=1' % rc,
                            '--required', trait, '--group', '2',
                            '--resource', '%s=1' % rc, '--forbidden', trait,
                            '--group-policy', 'none')
        steps = [(row['group'], row['criterion'], row['providers'],
                  row['trees'], row['note']) for row in rows[1:]]
        self.assertEqual([
            ('1', 'room for %s=1' % rc, 2, 2, ''),
            ('1', 'has trait %s' % trait, 1, 1, ''),
            ('2', 'room for %s=1' % rc, 2, 1, ''),
            ('2', 'without trait %s' % trait, rows[0]['providers'] - 1, 0,
             'empties the set'),
            ('', 'allocation candidates', 0, 0, 'no candidates')], steps)
        self.assertVerdicts(
            ['--group', '1', '--resource', '%s=1' % rc, '--required', trait,
             '--group', '2', '--resource', '%s=1' % rc, '--forbidden',
             trait, '--group-policy', 'none'],
            {first['name']: [first['uuid']],
             second['name']: [second['uuid']]})

    # --- the funnel against the server's answers

    def anchored_trees(self, options):
        """The trees ``allocation candidate list`` anchors candidates at:
        those of the providers that are not sharing providers."""
        rows = self.openstack(['allocation', 'candidate', 'list']
                              + list(options), use_json=True)
        providers = {p['uuid']: p for p in self.openstack(
            ['resource', 'provider', 'list'], use_json=True,
            version='1.14')}
        sharing = {p['uuid'] for p in self.openstack(
            ['resource', 'provider', 'list', '--required', SHARES],
            use_json=True, version='1.18')}
        by_candidate = {}
        for row in rows:
            by_candidate.setdefault(row['#'], []).append(
                row['resource provider'])
        anchors = set()
        for uuids in by_candidate.values():
            own = [u for u in uuids if u not in sharing] or uuids
            anchors |= {providers[u]['root_provider_uuid'] for u in own}
        return anchors

    def assertFunnelMatchesTheServer(self, resources, filters):
        """One group: the funnel's rows never grow, and after each
        criterion its trees are the trees ``GET /allocation_candidates``
        anchors candidates at for the request cut there (what capacity
        interplay could change, summed amounts on one provider, cannot
        happen with one group taking each class once)."""
        rows = self.explain(*(resources + filters))
        trees = [row['trees'] for row in rows]
        self.assertEqual(sorted(trees[:-1], reverse=True), trees[:-1])
        cuts = [resources[:i + 2] for i in range(0, len(resources), 2)]
        cuts += [resources + filters[:i + 2]
                 for i in range(0, len(filters), 2)]
        # Criteria come in funnel order: rooms, then positive filters,
        # then negative ones; the test's filters are given in that order.
        for row, cut in zip(rows[1:-1], cuts):
            self.assertEqual(len(self.anchored_trees(cut)), row['trees'],
                             (row, cut))
        self.assertEqual(len(self.anchored_trees(resources + filters)),
                         rows[-1]['trees'])
        self.assertEqual(rows[-2]['trees'], rows[-1]['trees'])
        return rows

    def disabled_numa_cloud(self):
        """Plain and NUMA hosts (CPU on two NUMA children, disk on the
        root), one of each disabled on its root as Nova does it, all in
        one aggregate with a shared disk whose max_unit is 100."""
        cpu, disk = self.create_resource_class(), self.create_resource_class()
        agg = str(uuid.uuid4())
        shared = self.host('shared-disk',
                           **{disk: {'total': 1000, 'max_unit': 100}})
        self.set_provider_traits(shared['uuid'], [SHARES])
        hosts = {}
        for name in ('plain', 'plain-disabled', 'numa', 'numa-disabled'):
            if name.startswith('plain'):
                root = self.host(name, **{cpu: {'total': 8},
                                          disk: {'total': 200}})
            else:
                root = self.host(name, **{disk: {'total': 200}})
                for _ in range(2):
                    node = self.create_provider(self.unique('numa'),
                                                parent=root['uuid'])
                    self.set_inventory(node['uuid'], {cpu: {'total': 4}})
            if name.endswith('disabled'):
                self.set_provider_traits(root['uuid'], [DISABLED])
            self.set_provider_aggregates(root['uuid'], [agg])
            hosts[name] = root
        self.set_provider_aggregates(shared['uuid'], [agg])
        return cpu, disk, agg, hosts

    def test_funnel_on_disabled_numa_hosts_and_a_shared_disk(self):
        cpu, disk, agg, hosts = self.disabled_numa_cloud()
        # The disk must come from the root: the disabled root supplies,
        # so both disabled trees leave at the trait row (the NUMA nodes
        # and the shared disk lack the trait, which kept them in before).
        rows = self.assertFunnelMatchesTheServer(
            ['--resource', '%s=2' % cpu, '--resource', '%s=150' % disk],
            ['--forbidden', DISABLED])
        self.assertEqual([
            ('room for %s=2' % cpu, 4), ('room for %s=150' % disk, 4),
            ('without trait %s' % DISABLED, 2), ('allocation candidates', 2)],
            [(row['criterion'], row['trees']) for row in rows[1:]])
        # The shared disk can serve: the NUMA node and the shared disk
        # supply everything and the disabled root nothing, so Placement
        # returns the disabled NUMA host; so does the funnel. Only
        # --root-required takes it out.
        options = ['--resource', '%s=2' % cpu, '--resource', '%s=50' % disk]
        rows = self.assertFunnelMatchesTheServer(
            options, ['--forbidden', DISABLED])
        self.assertEqual(3, rows[-2]['trees'])
        rows = self.explain(*(options + ['--forbidden', DISABLED,
                                         '--root-required', '!' + DISABLED]))
        self.assertEqual(('root has !%s' % DISABLED, 2),
                         (rows[-2]['criterion'], rows[-2]['trees']))
        self.assertEqual(2, rows[-1]['trees'])
        self.assertEqual(2, len(self.anchored_trees(
            options + ['--forbidden', DISABLED, '--root-required',
                       '!' + DISABLED])))

    def test_funnel_on_a_disabled_aggregate(self):
        """Every host of the aggregate is disabled; its shared disk is
        not: the trait row empties the set, and says so."""
        cpu, disk, agg, hosts = self.disabled_numa_cloud()
        other = str(uuid.uuid4())
        members = [self.host('off', **{cpu: {'total': 8}})
                   for _ in range(2)]
        shared = self.host('shared-disk', **{disk: {'total': 1000}})
        self.set_provider_traits(shared['uuid'], [SHARES])
        for member in members + [shared]:
            self.set_provider_aggregates(member['uuid'], [other])
        for member in members:
            self.set_provider_traits(member['uuid'], [DISABLED])
        rows = self.assertFunnelMatchesTheServer(
            ['--resource', '%s=2' % cpu, '--resource', '%s=50' % disk],
            ['--member-of', other, '--forbidden', DISABLED])
        self.assertEqual([
            ('room for %s=2' % cpu, 6, ''), ('room for %s=50' % disk, 6, ''),
            ('in aggregate %s' % other, 2, ''),
            ('without trait %s' % DISABLED, 0, 'empties the set'),
            ('allocation candidates', 0, 'no candidates')],
            [(row['criterion'], row['trees'], row['note'])
             for row in rows[1:]])
        # Any of two aggregates reads as such.
        rows = self.explain('--resource', '%s=2' % cpu, '--member-of',
                            '%s,%s' % tuple(sorted([agg, other])))
        self.assertEqual('in any of aggregates %s,%s' % tuple(
            sorted([agg, other])), rows[2]['criterion'])

    def test_exit_status_when_no_tree_named_is_a_candidate(self):
        host = self.host(VCPU={'total': 4})
        other = self.host(VCPU={'total': 1})
        result = self.openstack(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=2',
             '--resource-provider', other['name'], '-f', 'json'],
            may_fail=True)
        self.assertEqual(3, result.code, result.stderr)
        self.assertEqual(['fail'], [row['result'] for row in json.loads(
            result.stdout) if row['check'] == 'candidate'])
        result = self.openstack(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=2',
             '--resource-provider', other['name'], '--resource-provider',
             host['name']], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)

    def test_older_versions_and_ignored_options(self):
        """A version given below 1.18 judges the request at that version
        (the reads go at 1.18); --mappings and --limit change nothing."""
        root, nodes, gpu = self.numa_host()
        rows = self.explain('--resource', 'VCPU=1', '--resource',
                            'DISK_GB=1', '--resource-provider', root['name'],
                            version='1.17')
        # Before 1.29 a candidate takes from one provider per tree: the
        # NUMA node's VCPU and the root's disk cannot go together.
        self.assertEqual(['fail'], [row['result'] for row in rows
                                    if row['check'] == 'candidate'])
        self.assertIn(('', '', 'one provider per tree'), self.failed(rows))
        rows = self.explain('--resource', 'VCPU=1', '--resource',
                            'DISK_GB=1', '--resource-provider', root['name'],
                            '--mappings', '--limit', '1', version='1.29')
        self.assertEqual(['pass'], [row['result'] for row in rows
                                    if row['check'] == 'candidate'])

    # --- errors

    def test_errors(self):
        host = self.host(VCPU={'total': 4})
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=1',
             '--resource-provider', 'no-such-provider'],
            "No resource provider with a name or UUID of 'no-such-provider'"
            " exists.")
        missing = 'CUSTOM_NO_SUCH_%s' % uuid.uuid4().hex[:6].upper()
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource',
             '%s=1' % missing, '--resource-provider', host['uuid']],
            'No such resource class %s' % missing)
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=1',
             '--required', 'CUSTOM_NO_SUCH_TRAIT_X', '--resource-provider',
             host['uuid']], 'No such trait(s): CUSTOM_NO_SUCH_TRAIT_X')
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource-provider',
             host['uuid']], 'At least one --resource must be specified.')
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=1',
             '--all-checks'], '--all-checks needs --resource-provider.')
        # An option the version given does not have: upstream's words.
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=1',
             '--required', 'HW_CPU_X86_AVX2', '--resource-provider',
             host['uuid']], base.GATE % ('1.12', '1.17'),
            version='1.12')
        self.pretend_server_max('1.17')
        self.assertCommandFails(
            ['allocation', 'candidate', 'explain', '--resource', 'VCPU=1'],
            base.GATE % ('1.17', '1.18'))
