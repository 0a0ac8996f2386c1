# SPDX-License-Identifier: Apache-2.0
"""The request Nova's scheduler sends for a flavor (flavor_request.py).

Each expectation was worked out from Nova 34.0.0's rules by hand
(nova/scheduler/utils.py, nova/virt/hardware.py, request_filter.py).
"""

import testtools

from osc_placement import flavor_request as fr

DISABLED = '!COMPUTE_STATUS_DISABLED'


def flavor(vcpus=2, ram=2048, disk=20, ephemeral=0, swap='', **specs):
    return {'id': 'f-1', 'name': 'm1.test', 'vcpus': vcpus, 'ram': ram,
            'disk': disk, 'OS-FLV-EXT-DATA:ephemeral': ephemeral,
            'swap': swap, 'extra_specs': specs}


def specs(**pairs):
    """Extra spec keys have ':' in them; ``resources__VCPU`` reads as
    ``resources:VCPU``."""
    return {key.replace('__', ':'): value for key, value in pairs.items()}


def translate(vcpus=2, ram=2048, disk=20, ephemeral=0, swap='', extra=None,
              **kwargs):
    return fr.translate(flavor(vcpus, ram, disk, ephemeral, swap,
                               **(extra or {})), **kwargs)


class PlainFlavorTests(testtools.TestCase):

    def test_plain_flavor(self):
        request = translate()
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         request.resources())
        self.assertEqual(['!COMPUTE_STATUS_DISABLED'], request.root_required)
        self.assertIsNone(request.group_policy)
        self.assertEqual(
            'resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2'
            '&root_required=!COMPUTE_STATUS_DISABLED',
            request.query_string())

    def test_disabled_hosts_are_forbidden_on_the_root_not_the_group(self):
        request = translate()
        self.assertEqual([], request.groups['']['forbidden'])
        self.assertIn(DISABLED, request.root_required)

    def test_swap_in_mb_is_rounded_up_to_whole_gb(self):
        self.assertEqual(21, translate(swap=1)
                         .resources()['DISK_GB'])
        self.assertEqual(21, translate(swap=1024).resources()['DISK_GB'])
        self.assertEqual(22, translate(swap=1025).resources()['DISK_GB'])
        self.assertEqual(20, translate(swap='').resources()['DISK_GB'])
        self.assertEqual(20, translate(swap=0).resources()['DISK_GB'])

    def test_ephemeral_and_swap_add_to_the_root_disk(self):
        self.assertEqual(20 + 10 + 2,
                         translate(ephemeral=10, swap=2048)
                         .resources()['DISK_GB'])

    def test_no_disk_at_all_asks_for_no_disk(self):
        self.assertNotIn('DISK_GB', translate(disk=0).resources())

    def test_disk_from_swap_only(self):
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 1},
                         translate(disk=0, swap=512).resources())

    def test_describe_names_the_flavor_and_each_group(self):
        lines = translate(extra=specs(trait__CUSTOM_A='required')).describe()
        self.assertIn('m1.test (f-1)', lines[0])
        self.assertIn('  group (unnamed): resources DISK_GB=20, '
                      'MEMORY_MB=2048, VCPU=2; required CUSTOM_A', lines)
        self.assertIn('  root provider: !COMPUTE_STATUS_DISABLED', lines)


class ResourcesSpecTests(testtools.TestCase):

    def test_override_replaces_the_flavor_amount(self):
        request = translate(extra=specs(resources__VCPU='6',
                                        resources__DISK_GB='5'))
        self.assertEqual({'VCPU': 6, 'MEMORY_MB': 2048, 'DISK_GB': 5},
                         request.resources())

    def test_zero_removes_the_class(self):
        request = translate(extra=specs(resources__DISK_GB='0'))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048}, request.resources())
        self.assertNotIn('DISK_GB', request.query_string())

    def test_zero_memory_and_vcpu(self):
        request = translate(extra=specs(resources__VCPU='0',
                                        resources__MEMORY_MB='0',
                                        resources__CUSTOM_BAREMETAL='1',
                                        resources__DISK_GB='0'))
        self.assertEqual({'CUSTOM_BAREMETAL': 1}, request.resources())

    def test_custom_class_is_added(self):
        request = translate(extra=specs(resources__CUSTOM_FPGA='2'))
        self.assertEqual(2, request.resources()['CUSTOM_FPGA'])
        self.assertEqual(4, len(request.resources()))

    def test_amounts_nova_ignores_are_ignored_with_a_note(self):
        request = translate(extra=specs(resources__CUSTOM_A='-1',
                                        resources__CUSTOM_B='x',
                                        resources__lower='1'))
        self.assertEqual({'VCPU', 'MEMORY_MB', 'DISK_GB'},
                         set(request.resources()))
        self.assertEqual(3, len(request.notes))

    def test_class_in_a_granular_group_is_not_added_unsuffixed(self):
        request = translate(extra=specs(resources1__VCPU='2',
                                        resources1__MEMORY_MB='1024'))
        self.assertEqual({'DISK_GB': 20}, request.resources())
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024},
                         request.resources('1'))

    def test_granular_zero_removes_unsuffixed_default_too(self):
        request = translate(extra=specs(resources1__DISK_GB='0',
                                        resources1__CUSTOM_X='1'))
        self.assertNotIn('DISK_GB', request.resources())
        self.assertEqual({'CUSTOM_X': 1}, request.resources('1'))


class TraitSpecTests(testtools.TestCase):

    def test_required_and_forbidden(self):
        request = translate(extra=specs(trait__CUSTOM_GOLD='required',
                                        trait__CUSTOM_SLOW='forbidden',
                                        trait__CUSTOM_ODD='preferred'))
        self.assertEqual(['CUSTOM_GOLD'], request.groups['']['required'])
        self.assertEqual(['CUSTOM_SLOW'], request.groups['']['forbidden'])
        self.assertIn('required=CUSTOM_GOLD,!CUSTOM_SLOW',
                      request.query_string())
        self.assertEqual(1, len(request.notes))

    def test_granular_group_of_traits_only_is_refused(self):
        error = self.assertRaises(
            fr.FlavorRequestError, translate,
            extra=specs(trait1__CUSTOM_NIC='required',
                        resources1__CUSTOM_NIC='0'))
        self.assertIn('request group 1 has traits but no resources',
                      str(error))


class GranularTests(testtools.TestCase):

    def test_groups_with_policy(self):
        request = translate(extra=specs(
            resources1__SRIOV_NET_VF='1', trait1__CUSTOM_PHYSNET_A='required',
            resources2__SRIOV_NET_VF='1', trait2__CUSTOM_PHYSNET_B='required',
            resources_gpu__VGPU='1', trait_gpu__CUSTOM_NV='forbidden',
            group_policy='isolate'))
        self.assertEqual(['1', '2', '_gpu'], request.suffixed)
        self.assertEqual('isolate', request.group_policy)
        self.assertEqual(
            'group_policy=isolate'
            '&required1=CUSTOM_PHYSNET_A&required2=CUSTOM_PHYSNET_B'
            '&required_gpu=!CUSTOM_NV'
            '&resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2'
            '&resources1=SRIOV_NET_VF:1&resources2=SRIOV_NET_VF:1'
            '&resources_gpu=VGPU:1'
            '&root_required=!COMPUTE_STATUS_DISABLED',
            request.query_string())

    def test_one_group_needs_no_policy(self):
        request = translate(extra=specs(resources1__VGPU='1'))
        self.assertIsNone(request.group_policy)

    def test_policy_with_one_group_is_sent_anyway(self):
        request = translate(extra=specs(resources1__VGPU='1',
                                        group_policy='none'))
        self.assertIn(('group_policy', 'none'), request.query_pairs())

    def test_several_groups_without_policy_are_refused(self):
        error = self.assertRaises(
            fr.FlavorRequestError, translate,
            extra=specs(resources1__VGPU='1', resources2__VGPU='1'))
        self.assertIn('group_policy', str(error))

    def test_invalid_policy_is_ignored_with_a_note(self):
        request = translate(extra=specs(resources1__VGPU='1',
                                        group_policy='sometimes'))
        self.assertIsNone(request.group_policy)
        self.assertIn('group_policy=sometimes ignored', request.notes[0])


class CpuPolicyTests(testtools.TestCase):

    def test_dedicated_asks_for_pcpu(self):
        request = translate(vcpus=4, extra=specs(hw__cpu_policy='dedicated'))
        self.assertEqual({'PCPU': 4, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         request.resources())

    def test_shared_policy_keeps_vcpu(self):
        request = translate(vcpus=4, extra=specs(hw__cpu_policy='shared'))
        self.assertEqual(4, request.resources()['VCPU'])

    def test_emulator_threads_isolate_adds_a_pcpu(self):
        request = translate(vcpus=4, extra=specs(
            hw__cpu_policy='dedicated', hw__emulator_threads_policy='isolate'))
        self.assertEqual(5, request.resources()['PCPU'])

    def test_emulator_threads_share_adds_none(self):
        request = translate(vcpus=4, extra=specs(
            hw__cpu_policy='dedicated', hw__emulator_threads_policy='share'))
        self.assertEqual(4, request.resources()['PCPU'])

    def test_emulator_isolate_without_dedicated_is_refused(self):
        self.assertRaises(fr.FlavorRequestError, translate,
                          extra=specs(hw__emulator_threads_policy='isolate'))

    def test_thread_policies_become_the_hyperthreading_trait(self):
        isolate = translate(extra=specs(hw__cpu_policy='dedicated',
                                        hw__cpu_thread_policy='isolate'))
        self.assertEqual(['HW_CPU_HYPERTHREADING'],
                         isolate.groups['']['forbidden'])
        require = translate(extra=specs(hw__cpu_policy='dedicated',
                                        hw__cpu_thread_policy='require'))
        self.assertEqual(['HW_CPU_HYPERTHREADING'],
                         require.groups['']['required'])
        prefer = translate(extra=specs(hw__cpu_policy='dedicated',
                                       hw__cpu_thread_policy='prefer'))
        self.assertEqual([], prefer.groups['']['required']
                         + prefer.groups['']['forbidden'])

    def test_thread_policy_without_dedicated_is_refused(self):
        self.assertRaises(fr.FlavorRequestError, translate,
                          extra=specs(hw__cpu_thread_policy='isolate'))

    def test_mixed_with_dedicated_mask(self):
        request = translate(vcpus=4, extra=specs(
            hw__cpu_policy='mixed', hw__cpu_dedicated_mask='^0'))
        self.assertEqual(1, request.resources()['VCPU'])
        self.assertEqual(3, request.resources()['PCPU'])
        request = translate(vcpus=4, extra=specs(
            hw__cpu_policy='mixed', hw__cpu_dedicated_mask='2-3',
            hw__emulator_threads_policy='isolate'))
        self.assertEqual(2, request.resources()['VCPU'])
        self.assertEqual(3, request.resources()['PCPU'])

    def test_mixed_with_realtime_mask(self):
        request = translate(vcpus=4, extra=specs(
            hw__cpu_policy='mixed', hw__cpu_realtime='yes',
            hw__cpu_realtime_mask='^0-1'))
        self.assertEqual({'VCPU': 2, 'PCPU': 2},
                         {rc: request.resources()[rc]
                          for rc in ('VCPU', 'PCPU')})

    def test_mixed_masks_nova_refuses(self):
        for extra in (specs(hw__cpu_policy='mixed'),
                      specs(hw__cpu_policy='mixed',
                            hw__cpu_dedicated_mask='0-3'),
                      specs(hw__cpu_policy='mixed',
                            hw__cpu_dedicated_mask='7'),
                      specs(hw__cpu_policy='mixed',
                            hw__cpu_dedicated_mask='a'),
                      specs(hw__cpu_policy='dedicated',
                            hw__cpu_dedicated_mask='0')):
            self.assertRaises(fr.FlavorRequestError, translate, vcpus=4,
                              extra=extra)

    def test_explicit_pcpu_is_kept(self):
        request = translate(vcpus=4, extra=specs(resources__PCPU='4'))
        self.assertEqual(4, request.resources()['PCPU'])
        self.assertNotIn('VCPU', request.resources())

    def test_explicit_pcpu_must_match_vcpus(self):
        self.assertRaises(fr.FlavorRequestError, translate, vcpus=4,
                          extra=specs(resources__PCPU='2'))
        request = translate(vcpus=4, extra=specs(
            resources__PCPU='5', hw__emulator_threads_policy='isolate'))
        self.assertEqual(5, request.resources()['PCPU'])

    def test_policy_with_explicit_cpus_is_refused(self):
        self.assertRaises(fr.FlavorRequestError, translate,
                          extra=specs(hw__cpu_policy='dedicated',
                                      resources__VCPU='2'))
        self.assertRaises(fr.FlavorRequestError, translate,
                          extra=specs(resources__VCPU='2',
                                      resources1__PCPU='2'))

    def test_unknown_policy_is_refused(self):
        error = self.assertRaises(fr.FlavorRequestError, translate,
                                  extra=specs(hw__cpu_policy='pinned'))
        self.assertIn('hw:cpu_policy=pinned', str(error))

    def test_parse_cpu_spec(self):
        self.assertEqual({0, 1, 3, 5},
                         fr.parse_cpu_spec('k', '0-3,^2,5'))
        self.assertEqual({1, 2}, fr.parse_cpu_spec('k', '0-3,^0,^3'))
        self.assertRaises(fr.FlavorRequestError, fr.parse_cpu_spec, 'k',
                          '3-1')


class OtherSpecTests(testtools.TestCase):

    def test_memory_encryption(self):
        request = translate(extra=specs(hw__mem_encryption='True'))
        self.assertEqual(1, request.resources()['MEM_ENCRYPTION_CONTEXT'])
        self.assertEqual(['HW_CPU_X86_AMD_SEV'],
                         request.groups['']['required'])

    def test_vtpm_traits_and_secret_security_on_the_root(self):
        request = translate(extra=specs(hw__tpm_version='2.0',
                                        hw__tpm_model='tpm-crb'))
        self.assertEqual(['COMPUTE_SECURITY_TPM_2_0',
                          'COMPUTE_SECURITY_TPM_CRB'],
                         request.groups['']['required'])
        self.assertEqual(['COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER',
                          DISABLED], request.root_required)

    def test_root_traits_of_request_filters(self):
        request = translate(extra=specs(
            hw__virtio_packed_ring='true', hw__sound_model='virtio',
            hw__ephemeral_encryption='1',
            hw__ephemeral_encryption_format='luks'), owner_nova=True)
        self.assertEqual(
            'root_required=COMPUTE_EPHEMERAL_ENCRYPTION,'
            'COMPUTE_EPHEMERAL_ENCRYPTION_LUKS,COMPUTE_NET_VIRTIO_PACKED,'
            'COMPUTE_SOUND_MODEL_VIRTIO,OWNER_NOVA,!COMPUTE_STATUS_DISABLED',
            request.query_string().split('&')[-1])

    def test_secure_boot_maxphysaddr_and_pci_socket(self):
        request = translate(extra=specs(
            os__secure_boot='required', hw__maxphysaddr_mode='emulate',
            hw__pci_numa_affinity_policy='socket'))
        self.assertEqual(['COMPUTE_ADDRESS_SPACE_EMULATED',
                          'COMPUTE_SECURITY_UEFI_SECURE_BOOT',
                          'COMPUTE_SOCKET_PCI_NUMA_AFFINITY'],
                         request.groups['']['required'])

    def test_persistent_memory_namespaces(self):
        request = translate(extra=specs(hw__pmem='small, large,small'))
        self.assertEqual(2, request.resources()[
            'CUSTOM_PMEM_NAMESPACE_SMALL'])
        self.assertEqual(1, request.resources()[
            'CUSTOM_PMEM_NAMESPACE_LARGE'])

    def test_device_profile_is_refused(self):
        error = self.assertRaises(fr.FlavorRequestError, translate,
                                  extra={'accel:device_profile': 'gpu'})
        self.assertIn('Cyborg', str(error))

    def test_pci_alias_is_noted(self):
        request = translate(extra={'pci_passthrough:alias': 'a1:1'})
        self.assertIn('pci_in_placement', request.notes[0])

    def test_unrelated_specs_change_nothing(self):
        self.assertEqual(translate().query_string(), translate(
            extra={'hw:numa_nodes': '2', 'quota:cpu_shares': '10',
                   'aggregate_instance_extra_specs:ssd': 'true',
                   'hw:mem_page_size': 'large'}).query_string())
