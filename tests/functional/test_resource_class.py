# SPDX-License-Identifier: Apache-2.0
"""``openstack resource class list`` (and create/set/show/delete, where the
installed plugin has them)."""

from importlib import metadata

from tests.functional import base

STANDARD = {'VCPU', 'MEMORY_MB', 'DISK_GB', 'PCI_DEVICE', 'VGPU',
            'SRIOV_NET_VF', 'IPV4_ADDRESS'}


def has_command(name):
    """Whether the installed plugin registers ``resource class <name>``."""
    return any(entry.name == 'resource_class_' + name for entry in
               metadata.entry_points(group='openstack.placement.v1'))


class ListTests:

    def names(self):
        rows = self.openstack('resource class list', use_json=True)
        self.assertEqual(['name'], list(rows[0]))
        return [row['name'] for row in rows]

    def test_list_standard_and_custom(self):
        names = self.names()
        self.assertTrue(STANDARD <= set(names), names)
        self.assertEqual(len(names), len(set(names)))
        custom = self.create_resource_class(self.unique_custom())
        self.assertIn(custom, self.names())
        self.http('DELETE', '/resource_classes/' + custom, expect=204)
        self.assertNotIn(custom, self.names())

    def test_list_value_format(self):
        custom = self.create_resource_class(self.unique_custom())
        lines = self.openstack('resource class list -f value').splitlines()
        self.assertIn('VCPU', lines)
        self.assertIn(custom, lines)


class TestResourceClassList_1_2(ListTests, base.FunctionalTestCase):
    VERSION = '1.2'


class TestResourceClassList_1_39(ListTests, base.FunctionalTestCase):
    VERSION = '1.39'


class TestResourceClassListNegotiated(ListTests, base.FunctionalTestCase):
    VERSION = None


class TestResourceClassGates(base.FunctionalTestCase):

    def test_list_needs_1_2(self):
        for version in ('1.0', '1.1'):
            result = self.assertCommandFails('resource class list',
                                             base.GATE % (version, '1.2'),
                                             version=version)
            self.assertEqual('', result.stdout)

    def test_other_commands_need_their_versions(self):
        gates = [(command, '1.2') for command in ('create', 'show', 'delete')
                 if has_command(command)]
        if has_command('set'):
            gates.append(('set', '1.7'))
        if not gates:
            self.skipTest('resource class create/set/show/delete are not '
                          'installed')
        for command, minimum in gates:
            below = '1.%d' % (int(minimum.split('.')[1]) - 1)
            self.assertCommandFails(
                'resource class %s CUSTOM_X' % command,
                base.GATE % (below, minimum), version=below)


class ManageTests:
    """create/set/show/delete, once the plugin has them."""

    def setUp(self):
        super().setUp()
        missing = [name for name in ('create', 'show', 'delete')
                   if not has_command(name)]
        if missing:
            self.skipTest('resource class %s not installed'
                          % '/'.join(missing))

    def test_create_show_delete(self):
        name = self.unique_custom()
        self.assertEqual('', self.openstack('resource class create ' + name))
        self.assertEqual({'name': name}, self.openstack(
            'resource class show ' + name, use_json=True))
        self.assertCommandFails(
            'resource class create ' + name,
            'Conflicting resource class already exists: %s (HTTP 409)'
            % name)
        self.assertEqual('', self.openstack('resource class delete ' + name))
        self.assertCommandFails(
            'resource class show ' + name,
            'No such resource class %s. (HTTP 404)' % name)
        self.assertCommandFails(
            'resource class delete ' + name,
            'No such resource class %s. (HTTP 404)' % name)

    def test_errors(self):
        result = self.assertCommandFails(
            'resource class create lower_case', 'JSON does not validate')
        self.assertIn("does not match '^CUSTOM_[A-Z0-9_]+$'", result.stderr)
        self.assertCommandFails(
            'resource class delete VCPU',
            'Error in delete resource class: Cannot delete standard '
            'resource class VCPU. (HTTP 400)')

    def test_delete_refused_while_inventory_exists(self):
        name = self.create_resource_class(self.unique_custom())
        rp = self.create_provider()['uuid']
        self.openstack(['resource', 'provider', 'inventory', 'set', rp,
                        '--resource', '%s=1' % name], version='1.39')
        self.assertCommandFails(
            'resource class delete ' + name,
            'Error in delete resource class: Cannot delete resource class '
            '%s. Class is in use in inventory. (HTTP 409)' % name)


class TestResourceClassManage_1_2(ManageTests, base.FunctionalTestCase):
    VERSION = '1.2'


class TestResourceClassManage_1_39(ManageTests, base.FunctionalTestCase):
    VERSION = '1.39'

    def test_set_is_idempotent(self):
        if not has_command('set'):
            self.skipTest('resource class set not installed')
        name = self.unique_custom()
        self.assertEqual('', self.openstack('resource class set ' + name))
        self.assertEqual('', self.openstack('resource class set ' + name))
        self.assertEqual({'name': name}, self.openstack(
            'resource class show ' + name, use_json=True))
