# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider create/list/show/set/delete``."""

import uuid

from tests.functional import base

COLUMNS_1_0 = ['uuid', 'name', 'generation']
COLUMNS_1_14 = COLUMNS_1_0 + ['root_provider_uuid', 'parent_provider_uuid']


class ProviderTests:
    """Run at every version that changes the columns or the requests."""

    COLUMNS = COLUMNS_1_14

    def create(self, name=None):
        return self.openstack(['resource', 'provider', 'create',
                               name or self.unique('rp')], use_json=True)

    def test_create_show_list_delete(self):
        name = self.unique('rp')
        created = self.create(name)
        self.assertEqual(self.COLUMNS, list(created))
        self.assertEqual(name, created['name'])
        self.assertEqual(0, created['generation'])
        uuid.UUID(created['uuid'])
        if 'root_provider_uuid' in self.COLUMNS:
            self.assertEqual(created['uuid'], created['root_provider_uuid'])
            self.assertIsNone(created['parent_provider_uuid'])

        shown = self.openstack('resource provider show ' + created['uuid'],
                               use_json=True)
        self.assertEqual(created, shown)

        by_name = self.openstack('resource provider list --name ' + name,
                                 use_json=True)
        self.assertEqual([created], by_name)
        by_uuid = self.openstack(
            'resource provider list --uuid ' + created['uuid'],
            use_json=True)
        self.assertEqual([created], by_uuid)

        self.assertEqual(
            '', self.openstack('resource provider delete ' + created['uuid']))
        self.assertCommandFails(
            'resource provider show ' + created['uuid'],
            'No resource provider with uuid %s found (HTTP 404)'
            % created['uuid'])
        self.assertEqual([], self.openstack(
            'resource provider list --name ' + name, use_json=True))

    def test_create_with_uuid(self):
        rp_uuid = str(uuid.uuid4())
        created = self.openstack(
            ['resource', 'provider', 'create', self.unique('rp'),
             '--uuid', rp_uuid], use_json=True)
        self.assertEqual(rp_uuid, created['uuid'])

    def test_list_table_has_version_columns(self):
        created = self.create()
        table = self.openstack('resource provider list --uuid '
                               + created['uuid'])
        header = table.splitlines()[1]
        self.assertEqual(self.COLUMNS,
                         [cell.strip() for cell in header.split('|')[1:-1]])
        value = self.openstack('resource provider list -f value --uuid '
                               + created['uuid'])
        expected = [created['uuid'], created['name'], '0']
        if len(self.COLUMNS) == 5:
            expected += [created['uuid'], 'None']
        self.assertEqual(' '.join(expected), value.strip())

    def test_set_renames(self):
        created = self.create()
        new_name = self.unique('renamed')
        updated = self.openstack(
            ['resource', 'provider', 'set', created['uuid'],
             '--name', new_name], use_json=True)
        self.assertEqual(self.COLUMNS, list(updated))
        self.assertEqual(new_name, updated['name'])
        self.assertEqual(created['uuid'], updated['uuid'])
        self.assertEqual(new_name, self.openstack(
            'resource provider show -f value -c name '
            + created['uuid']).strip())

    def test_duplicate_name_conflicts(self):
        created = self.create()
        self.assertCommandFails(
            ['resource', 'provider', 'create', created['name']],
            'Conflicting resource provider name: %s already exists. '
            '(HTTP 409)' % created['name'])
        other = self.create()
        # Upstream words the rename conflict differently from the create.
        self.assertCommandFails(
            ['resource', 'provider', 'set', other['uuid'],
             '--name', created['name']],
            'Conflicting resource provider %s already exists. (HTTP 409)'
            % created['name'])

    def test_unknown_provider_errors(self):
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider delete ' + missing,
            'No resource provider with uuid %s found for delete (HTTP 404)'
            % missing)
        self.assertCommandFails(
            'resource provider set %s --name x' % missing,
            'No resource provider with uuid %s found (HTTP 404)' % missing)
        # Not a UUID, so a name: none matches.
        self.assertCommandFails(
            'resource provider show 1234',
            "No resource provider with a name or UUID of '1234' exists.")

    def test_create_invalid_uuid(self):
        self.assertCommandFails(
            'resource provider create %s --uuid 1234' % self.unique('rp'),
            "is not a 'uuid'")

    def test_missing_name_is_argparse_error(self):
        self.assertCommandFails(
            'resource provider create',
            'the following arguments are required: <name>', code=2)


class TestProvider_1_0(ProviderTests, base.FunctionalTestCase):
    VERSION = '1.0'
    COLUMNS = COLUMNS_1_0

    def test_create_reads_location(self):
        calls = self.record_requests()
        created = self.create()
        self.assertEqual(['POST', 'GET'], [m for m, _, _ in calls])
        self.assertTrue(calls[1][1].endswith(
            '/resource_providers/' + created['uuid']))
        self.assertEqual('placement 1.0', calls[0][2])

    def test_parent_and_list_gates(self):
        self.assertCommandFails(
            'resource provider create x --parent-provider %s'
            % uuid.uuid4(), base.GATE % ('1.0', '1.14'))
        self.assertCommandFails(
            'resource provider set %s --parent-provider %s'
            % (uuid.uuid4(), uuid.uuid4()), base.GATE % ('1.0', '1.14'))
        self.assertCommandFails(
            'resource provider set %s --no-parent' % uuid.uuid4(),
            base.GATE % ('1.0', '1.37'))
        for option, minimum in (
                ('--aggregate-uuid %s' % uuid.uuid4(), '1.3'),
                ('--member-of %s' % uuid.uuid4(), '1.3'),
                ('--resource VCPU=1', '1.4'),
                ('--in-tree %s' % uuid.uuid4(), '1.14'),
                ('--required HW_CPU_X86_AVX', '1.18'),
                ('--forbidden HW_CPU_X86_AVX', '1.22')):
            self.assertCommandFails('resource provider list ' + option,
                                    base.GATE % ('1.0', minimum))


class TestProvider_1_14(ProviderTests, base.FunctionalTestCase):
    VERSION = '1.14'

    def test_create_reads_location(self):
        calls = self.record_requests()
        self.create()
        self.assertEqual(['POST', 'GET'], [m for m, _, _ in calls])

    def test_nested_tree(self):
        root = self.create()
        child = self.openstack(
            ['resource', 'provider', 'create', self.unique('child'),
             '--parent-provider', root['uuid']], use_json=True)
        grandchild = self.openstack(
            ['resource', 'provider', 'create', self.unique('gc'),
             '--parent-provider', child['uuid']], use_json=True)
        self.assertEqual(root['uuid'], child['parent_provider_uuid'])
        self.assertEqual(root['uuid'], child['root_provider_uuid'])
        self.assertEqual(child['uuid'], grandchild['parent_provider_uuid'])
        self.assertEqual(root['uuid'], grandchild['root_provider_uuid'])
        self.create()  # another tree, not listed below

        tree = self.openstack('resource provider list --in-tree '
                              + grandchild['uuid'], use_json=True)
        self.assertEqual(
            sorted([root['uuid'], child['uuid'], grandchild['uuid']]),
            sorted(rp['uuid'] for rp in tree))
        # A tree table shows None for the root's parent.
        table = self.openstack('resource provider list -f value '
                               '-c uuid -c parent_provider_uuid --in-tree '
                               + root['uuid'])
        self.assertIn('%s None' % root['uuid'], table)
        self.assertIn('%s %s' % (child['uuid'], root['uuid']), table)

        # A parent cannot be deleted while it has children.
        self.assertCommandFails(
            'resource provider delete ' + root['uuid'],
            'Unable to delete parent resource provider %s: It has child '
            'resource providers. (HTTP 409)' % root['uuid'])
        self.openstack('resource provider delete ' + grandchild['uuid'])
        self.openstack('resource provider delete ' + child['uuid'])
        self.openstack('resource provider delete ' + root['uuid'])

    def test_parent_is_set_once_before_1_37(self):
        root = self.create()
        other = self.create()
        orphan = self.create()
        # Giving a root a parent is allowed from 1.14 ...
        adopted = self.openstack(
            ['resource', 'provider', 'set', orphan['uuid'],
             '--parent-provider', root['uuid']], use_json=True)
        self.assertEqual(root['uuid'], adopted['parent_provider_uuid'])
        self.assertEqual(orphan['name'], adopted['name'])
        # ... changing it is not, before 1.37.
        result = self.assertCommandFails(
            ['resource', 'provider', 'set', orphan['uuid'],
             '--parent-provider', other['uuid']], '(HTTP 400)')
        self.assertIn('re-parenting a provider is not currently allowed',
                      result.stderr)
        self.assertCommandFails(
            ['resource', 'provider', 'set', orphan['uuid'], '--no-parent'],
            base.GATE % ('1.14', '1.37'))
        # A rename leaves the parent alone.
        renamed = self.openstack(
            ['resource', 'provider', 'set', orphan['uuid'], '--name',
             self.unique('renamed')], use_json=True)
        self.assertEqual(root['uuid'], renamed['parent_provider_uuid'])
        self.assertEqual(root['uuid'], renamed['root_provider_uuid'])

    def test_unknown_parent(self):
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            ['resource', 'provider', 'create', self.unique('rp'),
             '--parent-provider', missing], '(HTTP 400)')
        self.assertEqual([], self.openstack(
            'resource provider list --in-tree ' + missing, use_json=True))

    def test_list_gates(self):
        self.assertCommandFails('resource provider list --required A',
                                base.GATE % ('1.14', '1.18'))


class TestProvider_1_20(ProviderTests, base.FunctionalTestCase):
    """POST answers with the provider: no GET of its Location."""

    VERSION = '1.20'

    def test_create_uses_response_body(self):
        calls = self.record_requests()
        self.create()
        self.assertEqual(['POST'], [m for m, _, _ in calls])
        self.assertEqual('placement 1.20', calls[0][2])


class TestProvider_1_37(ProviderTests, base.FunctionalTestCase):
    VERSION = '1.37'

    def test_reparent_and_unparent(self):
        root = self.create()
        other = self.create()
        child = self.openstack(
            ['resource', 'provider', 'create', self.unique('child'),
             '--parent-provider', root['uuid']], use_json=True)
        grandchild = self.openstack(
            ['resource', 'provider', 'create', self.unique('gc'),
             '--parent-provider', child['uuid']], use_json=True)
        moved = self.openstack(
            ['resource', 'provider', 'set', child['uuid'],
             '--parent-provider', other['uuid']], use_json=True)
        self.assertEqual(other['uuid'], moved['parent_provider_uuid'])
        self.assertEqual(other['uuid'], moved['root_provider_uuid'])
        self.assertEqual(child['name'], moved['name'])
        renamed = self.openstack(
            ['resource', 'provider', 'set', child['uuid'], '--name',
             self.unique('renamed')], use_json=True)
        self.assertEqual(other['uuid'], renamed['parent_provider_uuid'])

        # The subtree moves along: the grandchild has the new root.
        self.assertEqual(other['uuid'], self.openstack(
            'resource provider show ' + grandchild['uuid'],
            use_json=True)['root_provider_uuid'])
        self.assertEqual(
            sorted([other['uuid'], child['uuid'], grandchild['uuid']]),
            sorted(rp['uuid'] for rp in self.openstack(
                'resource provider list --in-tree ' + other['uuid'],
                use_json=True)))

        freed = self.openstack(
            ['resource', 'provider', 'set', child['uuid'], '--no-parent'],
            use_json=True)
        self.assertIsNone(freed['parent_provider_uuid'])
        self.assertEqual(child['uuid'], freed['root_provider_uuid'])
        self.assertEqual(sorted([child['uuid'], grandchild['uuid']]),
                         sorted(rp['uuid'] for rp in self.openstack(
                             'resource provider list --in-tree '
                             + grandchild['uuid'], use_json=True)))
        self.assertEqual(child['uuid'], self.openstack(
            'resource provider show ' + grandchild['uuid'],
            use_json=True)['root_provider_uuid'])
        # Now the old parents can go.
        self.openstack('resource provider delete ' + root['uuid'])
        self.openstack('resource provider delete ' + other['uuid'])

    def test_no_loops(self):
        root = self.create()
        child = self.openstack(
            ['resource', 'provider', 'create', self.unique('child'),
             '--parent-provider', root['uuid']], use_json=True)
        self.assertCommandFails(
            ['resource', 'provider', 'set', root['uuid'],
             '--parent-provider', child['uuid']], '(HTTP 400)')

    def test_parent_options_are_exclusive(self):
        self.assertCommandFails(
            ['resource', 'provider', 'set', str(uuid.uuid4()),
             '--no-parent', '--parent-provider', str(uuid.uuid4())],
            'not allowed with argument', code=2)

    def test_any_of_required_needs_1_39(self):
        self.assertCommandFails('resource provider list --required A,B',
                                base.GATE % ('1.37', '1.39'))


class TestProvider_1_39(ProviderTests, base.FunctionalTestCase):
    VERSION = '1.39'

    def test_list_filters(self):
        """--resource, --member-of, --required, --forbidden combined."""
        agg1, agg2 = str(uuid.uuid4()), str(uuid.uuid4())
        trait_a = self.unique_custom('CUSTOM_A')
        trait_b = self.unique_custom('CUSTOM_B')
        # A class of this test's own: other tests' providers (in a shared
        # database) never match the --resource filters.
        rc = self.create_resource_class(self.unique_custom())
        big, small, other = self.create(), self.create(), self.create()
        self.openstack(['resource', 'provider', 'inventory', 'set',
                        big['uuid'], '--resource', rc + '=16'])
        self.openstack(['resource', 'provider', 'inventory', 'set',
                        small['uuid'], '--resource', rc + '=2'])
        self.set_provider_aggregates(big['uuid'], [agg1])
        self.set_provider_aggregates(small['uuid'], [agg1, agg2])
        self.set_provider_aggregates(other['uuid'], [agg2])
        self.set_provider_traits(big['uuid'], [trait_a])
        self.set_provider_traits(small['uuid'], [trait_a, trait_b])
        self.set_provider_traits(other['uuid'], [trait_b])

        def listed(*options):
            found = self.openstack(['resource', 'provider', 'list']
                                   + list(options), use_json=True)
            return sorted(rp['name'] for rp in found)

        self.assertEqual([big['name']], listed('--resource', rc + '=4'))
        self.assertEqual(sorted([big['name'], small['name']]),
                         listed('--resource', rc + '=2'))
        self.assertEqual(sorted([big['name'], small['name']]),
                         listed('--member-of', agg1))
        self.assertEqual(sorted([big['name'], small['name'], other['name']]),
                         listed('--member-of', '%s,%s' % (agg1, agg2)))
        # Repeated: every occurrence must hold (1.24).
        self.assertEqual([small['name']],
                         listed('--member-of', agg1, '--member-of', agg2))
        # Forbidden aggregate (1.32).
        self.assertEqual([big['name']],
                         listed('--member-of', agg1, '--member-of',
                                '!' + agg2))
        self.assertEqual(sorted([big['name'], small['name']]),
                         listed('--required', trait_a))
        self.assertEqual([small['name']],
                         listed('--required', trait_a,
                                '--required', trait_b))
        self.assertEqual([big['name']],
                         listed('--required', trait_a,
                                '--forbidden', trait_b))
        # Any-of traits (1.39).
        self.assertEqual(sorted([big['name'], small['name'], other['name']]),
                         listed('--required', '%s,%s' % (trait_a, trait_b)))
        self.assertEqual([other['name']],
                         listed('--required', '%s,%s' % (trait_a, trait_b),
                                '--forbidden', trait_a))
        self.assertEqual([small['name']],
                         listed('--resource', rc + '=1', '--member-of',
                                agg2))

        # The deprecated spelling still works, and says so.
        result = self.openstack(
            ['resource', 'provider', 'list', '-f', 'json', '-c', 'name',
             '--aggregate-uuid', agg2], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn('The --aggregate-uuid option is deprecated, please '
                      'use --member-of instead.', result.stderr)
        self.assertEqual(sorted([small['name'], other['name']]),
                         sorted(rp['name'] for rp in
                                base.json.loads(result.stdout)))
        self.assertCommandFails(
            ['resource', 'provider', 'list', '--aggregate-uuid', agg1,
             '--member-of', agg2], 'not allowed with argument', code=2)

    def test_unknown_trait_in_filter(self):
        self.assertCommandFails(
            'resource provider list --required CUSTOM_NO_SUCH_TRAIT_X',
            'Invalid trait(s) in "required" parameter: No such trait(s): '
            'CUSTOM_NO_SUCH_TRAIT_X. (HTTP 400)')

    def test_invalid_resource_filter(self):
        self.assertCommandFails(
            'resource provider list --resource CUSTOM_NO_SUCH_CLASS_X=1',
            'Invalid resource class in resources parameter: No such '
            'resource class CUSTOM_NO_SUCH_CLASS_X. (HTTP 400)')

    def test_delete_refused_while_in_use(self):
        rp = self.create()
        self.openstack(['resource', 'provider', 'inventory', 'set',
                        rp['uuid'], '--resource', 'VCPU=8'])
        consumer = str(uuid.uuid4())
        self.allocate(consumer, {rp['uuid']: {'VCPU': 2}})
        self.assertCommandFails(
            'resource provider delete ' + rp['uuid'],
            'Unable to delete resource provider %s: Resource provider has '
            'allocations. (HTTP 409)' % rp['uuid'])
        self.assertEqual(2, self.openstack(
            'resource provider show %s' % rp['uuid'],
            use_json=True)['generation'])

    def test_show_allocations(self):
        rp = self.create()
        self.openstack(['resource', 'provider', 'inventory', 'set',
                        rp['uuid'], '--resource', 'VCPU=8',
                        '--resource', 'MEMORY_MB=1024'])
        consumer = str(uuid.uuid4())
        self.allocate(consumer, {rp['uuid']: {'VCPU': 2, 'MEMORY_MB': 256}})
        if self.http('GET', '/resource_providers/%s/allocations'
                     % rp['uuid']).status_code == 404:
            self.skipTest('the server has no provider allocations route')
        shown = self.openstack('resource provider show --allocations '
                               + rp['uuid'], use_json=True)
        self.assertEqual(COLUMNS_1_14 + ['allocations'], list(shown))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 256},
                         shown['allocations'][consumer]['resources'])


class TestNegotiationWithOlderServer(base.FunctionalTestCase):
    """The default version against a server whose maximum is lower: the
    client settles on the server's maximum, and gates and requests
    follow it."""

    def test_create_at_1_17(self):
        self.pretend_server_max('1.17')
        calls = self.record_requests()
        created = self.openstack(['resource', 'provider', 'create',
                                  self.unique('rp')], use_json=True)
        self.assertEqual(COLUMNS_1_14, list(created))
        # 406 at 1.39, then the POST and (below 1.20) the GET of Location.
        self.assertEqual(
            [('GET', '/', 'placement 1.39'),
             ('POST', '/resource_providers', 'placement 1.17')],
            calls[:2])
        self.assertEqual('GET', calls[2][0])
        self.assertTrue(calls[2][1].endswith(
            '/resource_providers/' + created['uuid']))
        self.assertEqual(3, len(calls))
        self.assertCommandFails(
            ['resource', 'provider', 'list', '--required', 'HW_CPU_X86_AVX'],
            base.GATE % ('1.17', '1.18'))

    def test_oldest_server(self):
        self.pretend_server_max('1.0')
        rp = self.openstack(['resource', 'provider', 'create',
                             self.unique('rp')], use_json=True)
        self.assertEqual(COLUMNS_1_0, list(rp))
        self.assertCommandFails('resource provider aggregate list '
                                + rp['uuid'], base.GATE % ('1.0', '1.1'))
        self.assertCommandFails('resource class list',
                                base.GATE % ('1.0', '1.2'))
        # Below 1.5, once negotiated, a class is required for delete.
        self.assertCommandFails(
            'resource provider inventory delete ' + rp['uuid'],
            'the following arguments are required: --resource-class',
            code=2)


class TestProviderErrorPaths(base.FunctionalTestCase):
    VERSION = '1.39'

    def test_names_are_sent_and_filtered_verbatim(self):
        for name in ('\u30db\u30b9\u30c8-%s & b=c' % uuid.uuid4().hex[:6],
                     self.unique('a/b?c#d%20')):
            created = self.openstack(['resource', 'provider', 'create',
                                      name], use_json=True)
            self.assertEqual(name, created['name'])
            self.assertEqual([created], self.openstack(
                ['resource', 'provider', 'list', '--name', name],
                use_json=True))

    def test_name_too_long(self):
        result = self.assertCommandFails(
            ['resource', 'provider', 'create', 'x' * 201],
            'JSON does not validate: ')
        self.assertIn("{'type': 'string', 'maxLength': 200}", result.stderr)
        self.assertEndsWithRequestId(result.stderr, 400)
        self.assertEqual(1, len(result.stderr.splitlines()))

    def test_bad_resource_filters(self):
        self.assertCommandFails(
            ['resource', 'provider', 'list', '--resource', 'VCPU'],
            'Badly formed resources parameter. Expected resources query '
            'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
            'Got: VCPU. (HTTP 400)')
        self.assertCommandFails(
            ['resource', 'provider', 'list', '--resource', 'VCPU=x'],
            'Requested resource VCPU expected positive integer amount. '
            'Got: x. (HTTP 400)')
        self.assertCommandFails(
            ['resource', 'provider', 'list', '--member-of', 'nope'],
            "Invalid query string parameters: Expected 'member_of' "
            "parameter to contain valid UUID(s). Got: nope (HTTP 400)")

    def test_unreachable_server(self):
        result = self.assertCommandFails(
            ['--os-endpoint', 'http://127.0.0.1:9', 'resource', 'provider',
             'list'], 'The Placement service at http://127.0.0.1:9 could '
            'not be reached: ')
        self.assertIn('Connection refused', result.stderr)
        self.assertEqual(1, len(result.stderr.splitlines()))

    def test_server_error(self):
        """A 5xx is not retried by plain commands; the text keeps the
        server's detail and the request id."""
        rp = self.create_provider()['uuid']
        seen = []

        def hook(environ):
            seen.append(environ['PATH_INFO'])
            body = (b'{"errors": [{"status": 500, "title": "Internal '
                    b'Server Error", "detail": "The server has either '
                    b'erred.\\n\\n database is locked"}]}')
            return ('500 Internal Server Error',
                    [('Content-Type', 'application/json'),
                     ('x-openstack-request-id', 'req-1234')], body)

        self.hook_server(hook)
        result = self.assertCommandFails(
            'resource provider show ' + rp,
            'Placement server error: database is locked (HTTP 500) '
            '(Request-ID: req-1234)')
        self.assertEqual(1, len(result.stderr.splitlines()))
        self.assertEqual(['/resource_providers/' + rp], seen)


class TestProviderNegotiated(base.FunctionalTestCase):
    """The default version: the client negotiates 1.39 with our server."""

    def test_create_and_list_at_negotiated_version(self):
        calls = self.record_requests()
        created = self.openstack(['resource', 'provider', 'create',
                                  self.unique('rp')], use_json=True)
        self.assertEqual(COLUMNS_1_14, list(created))
        # One GET / to negotiate, then a POST whose answer is the provider.
        self.assertEqual([('GET', '/', 'placement 1.39'),
                          ('POST', '/resource_providers', 'placement 1.39')],
                         calls)
        # 1.39 passes the any-of gate; the server then rejects the traits.
        self.assertCommandFails(
            ['resource', 'provider', 'list', '--required',
             'CUSTOM_NOPE_A,CUSTOM_NOPE_B'],
            'Invalid trait(s) in "required" parameter: No such trait(s): ')
        # --no-parent (1.37) passes the gate at the negotiated version.
        freed = self.openstack(['resource', 'provider', 'set',
                                created['uuid'], '--no-parent'],
                               use_json=True)
        self.assertIsNone(freed['parent_provider_uuid'])


class TestHelpSendsNothing(base.FunctionalTestCase):
    """Building a parser never negotiates: --help works without a server
    round trip, at the default version and at an explicit one."""

    COMMANDS = (
        'resource provider create', 'resource provider list',
        'resource provider show', 'resource provider set',
        'resource provider delete', 'resource provider usage show',
        'resource usage show', 'resource provider inventory set',
        'resource provider inventory class set',
        'resource provider inventory list',
        'resource provider inventory show',
        'resource provider inventory delete',
        'resource provider aggregate list',
        'resource provider aggregate set', 'resource class list')

    def test_help(self):
        calls = self.record_requests()
        for command in self.COMMANDS:
            result = self.openstack(command + ' --help', may_fail=True)
            self.assertEqual(0, result.code, result.stderr)
            self.assertIn('usage: ', result.stdout)
            self.assertIn(command, ' '.join(result.stdout.split()))
        self.assertEqual([], calls)

    def test_inventory_delete_help_follows_the_version(self):
        below = self.openstack('resource provider inventory delete --help',
                               version='1.4')
        self.assertIn('--resource-class <resource_class>',
                      ' '.join(below.split()))
        self.assertNotIn('[--resource-class', below)
        self.assertIn('[--resource-class', self.openstack(
            'resource provider inventory delete --help', version='1.5'))
