# SPDX-License-Identifier: Apache-2.0
"""A NUMA host with a GPU, the tree the tree and consumer tests share."""

import uuid


class NumaGpuHost:
    """Builds ``host`` -> ``numa0``, ``numa1`` -> ``gpu`` (under numa1).

    numa1 is created before numa0 so that listing children by name is not
    the order of creation. Names are unique per test (shared databases in
    the process and URL modes).
    """

    HOST_DISK = {'total': 100, 'reserved': 10, 'allocation_ratio': 1.5}
    NUMA = {'VCPU': {'total': 8, 'reserved': 0, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 4096, 'reserved': 512,
                          'allocation_ratio': 1.0}}
    GPU = {'total': 4, 'reserved': 0, 'allocation_ratio': 1.0}

    def build_numa_gpu_host(self):
        base = self.unique('host')
        host = self.create_provider(base)
        numa1 = self.create_provider(base + '-numa1', parent=host['uuid'])
        numa0 = self.create_provider(base + '-numa0', parent=host['uuid'])
        gpu = self.create_provider(base + '-gpu', parent=numa1['uuid'])
        self.set_inventory(host['uuid'], {'DISK_GB': self.HOST_DISK})
        self.set_inventory(numa0['uuid'], self.NUMA)
        self.set_inventory(numa1['uuid'], self.NUMA)
        self.set_inventory(gpu['uuid'], {'VGPU': self.GPU})
        self.set_provider_traits(host['uuid'], ['COMPUTE_VOLUME_EXTEND',
                                                'HW_CPU_X86_AVX2'])
        self.set_provider_traits(gpu['uuid'], ['CUSTOM_GPU_NVIDIA_A100'])
        self.aggregate = str(uuid.uuid4())
        self.set_provider_aggregates(host['uuid'], [self.aggregate])
        return {'host': host, 'numa0': numa0, 'numa1': numa1, 'gpu': gpu}
