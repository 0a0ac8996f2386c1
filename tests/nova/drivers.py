# SPDX-License-Identifier: Apache-2.0
"""Fake hypervisors for the Nova world, on Nova's fake virt driver.

Nova's functional tests choose a compute's hypervisor by the
``compute_driver`` option when the compute starts; these are three more
kinds of host, each reporting what a real driver reports for such a
host. Nova loads a driver from ``nova.virt`` only, so this module is
also known there as ``nova.virt.novaworld``: ``compute_driver =
novaworld.<Name>``.
"""

import sys
import uuid

from nova.virt import fake

MAGIC = 'CUSTOM_MAGIC'
MAGIC_TOTAL = 2
PCPU_TOTAL = 4
NAMESPACE = 'novaworld'

sys.modules.setdefault('nova.virt.' + NAMESPACE, sys.modules[__name__])


class ReinstalledHostDriver(fake.MediumFakeDriver):
    """A host reinstalled under its old name: its node identity is new.

    Nova's fake driver names a node's UUID after its hostname, the same
    every time; a reinstalled host (the identity file gone with the old
    disk) reports a fresh one.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._node_uuid = str(uuid.uuid4())

    def get_available_resource(self, nodename):
        resources = super().get_available_resource(nodename)
        if resources:
            resources['uuid'] = self._node_uuid
        return resources

    def get_nodenames_by_uuid(self, refresh=False):
        return {self._node_uuid: node for node in self.get_available_nodes()}


class MagicResourceDriver(fake.MediumFakeDriver):
    """A host with a device Nova's flavors ask for by a custom class
    (``resources:CUSTOM_MAGIC=1``), reported on the compute node."""

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None):
        super().update_provider_tree(provider_tree, nodename, allocations)
        inventory = provider_tree.data(nodename).inventory
        inventory[MAGIC] = {
            'total': MAGIC_TOTAL, 'min_unit': 1, 'max_unit': MAGIC_TOTAL,
            'step_size': 1, 'allocation_ratio': 1.0, 'reserved': 0}
        provider_tree.update_inventory(nodename, inventory)


class DedicatedCPUDriver(fake.MediumFakeDriver):
    """A host with CPUs set aside for pinning (``cpu_dedicated_set``):
    libvirt reports them as PCPU inventory beside the shared VCPUs."""

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None):
        super().update_provider_tree(provider_tree, nodename, allocations)
        inventory = provider_tree.data(nodename).inventory
        inventory['PCPU'] = {
            'total': PCPU_TOTAL, 'min_unit': 1, 'max_unit': PCPU_TOTAL,
            'step_size': 1, 'allocation_ratio': 1.0, 'reserved': 0}
        provider_tree.update_inventory(nodename, inventory)
