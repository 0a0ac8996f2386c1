# SPDX-License-Identifier: Apache-2.0
"""The request Nova's scheduler sends to Placement for a flavor.

Operators think in flavors; Placement answers requests of resource
classes and traits. ``translate(flavor)`` turns Nova's flavor (the dict
of its compute API, extra specs included) into the ``GET
/allocation_candidates`` request Nova's scheduler would send for a server
of that flavor booted from an image, by the rules of Nova's
``ResourceRequest`` and request filters (doc/source/user/explain.rst
lists them). What depends on more than the flavor (the image, the
availability zone, a requested host, ports) is left out. The result is
in the shape ``allocation candidate list`` parses its options into, so
explain and capacity judge it as they judge options.
"""

import math
import re
from urllib import parse

UNSUFFIXED = ''
VCPU, PCPU = 'VCPU', 'PCPU'
MEMORY_MB, DISK_GB = 'MEMORY_MB', 'DISK_GB'
DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'
OWNER_TRAIT = 'OWNER_NOVA'
HYPERTHREADING = 'HW_CPU_HYPERTHREADING'
EPHEMERAL_KEY = 'OS-FLV-EXT-DATA:ephemeral'

# resources[SUFFIX]:<class> and trait[SUFFIX]:<trait>, suffixes as
# Placement's named groups allow them.
_GRANULAR_KEY = re.compile(r'^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$')
# A class name Nova accepts: standard (Placement refuses one it does not
# know) or custom.
_CLASS_NAME = re.compile(r'^[A-Z0-9_]+$')
# The suffixes Nova's CPU checks count explicit VCPU/PCPU requests in.
_NUMBERED = re.compile(r'^([1-9][0-9]*)?$')

_TRUE = ('1', 't', 'true', 'on', 'y', 'yes')
CPU_POLICIES = ('shared', 'dedicated', 'mixed')
THREAD_POLICIES = ('prefer', 'isolate', 'require')
EMULATOR_POLICIES = ('share', 'isolate')
GROUP_POLICIES = ('none', 'isolate')
MEM_ENCRYPTION_TRAITS = {
    'amd-sev': 'HW_CPU_X86_AMD_SEV',
    'amd-sev-es': 'HW_CPU_X86_AMD_SEV_ES',
    'amd-sev-snp': 'HW_CPU_X86_AMD_SEV_SNP',
    'intel-tdx': 'HW_CPU_X86_INTEL_TDX',
}
# hw:tpm_version's values (1.2, 2.0) spelt as in the traits' names, so
# that no string here reads like a Placement microversion.
TPM_VERSION_TRAITS = {suffix.replace('_', '.'): 'COMPUTE_SECURITY_TPM_'
                      + suffix for suffix in ('1_2', '2_0')}
TPM_MODEL_TRAITS = {'tpm-tis': 'COMPUTE_SECURITY_TPM_TIS',
                    'tpm-crb': 'COMPUTE_SECURITY_TPM_CRB'}
TPM_SECRET_TRAITS = {
    'user': 'COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER',
    'host': 'COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST',
    'deployment': 'COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT',
}
MAXPHYSADDR_TRAITS = {'passthrough': 'COMPUTE_ADDRESS_SPACE_PASSTHROUGH',
                      'emulate': 'COMPUTE_ADDRESS_SPACE_EMULATED'}
EPHEMERAL_FORMATS = ('plain', 'luks', 'luksv2')


class FlavorRequestError(ValueError):
    """A flavor Nova would refuse, or one whose request needs more than
    the flavor to know."""


class FlavorRequest:
    """Nova's request for one flavor.

    ``groups``: suffix ('' for the unsuffixed group) -> the group's
    options in ``allocation_candidate.new_group``'s shape (``resources``
    as ``CLASS=AMOUNT`` strings, ``required`` and ``forbidden`` trait
    names); ``group_policy``: None, ``none`` or ``isolate``;
    ``root_required``: trait names, ``!`` before a forbidden one;
    ``notes``: what was ignored, and why.
    """

    def __init__(self, flavor, groups, group_policy, root_required, notes):
        self.flavor = flavor
        self.groups = groups
        self.group_policy = group_policy
        self.root_required = root_required
        self.notes = notes

    @property
    def suffixed(self):
        return [suffix for suffix in self.groups if suffix != UNSUFFIXED]

    def resources(self, suffix=UNSUFFIXED):
        """``{class: amount}`` of one group."""
        group = self.groups.get(suffix)
        if not group:
            return {}
        return {rc: int(amount) for rc, amount in
                (item.split('=') for item in group['resources'])}

    def query_pairs(self):
        """``(key, value)`` pairs of the query, in Nova's order (sorted)."""
        pairs = []
        if self.group_policy:
            pairs.append(('group_policy', self.group_policy))
        if self.root_required:
            pairs.append(('root_required', ','.join(self.root_required)))
        for suffix, group in self.groups.items():
            pairs.append(('resources' + suffix, ','.join(
                item.replace('=', ':') for item in group['resources'])))
            traits = group['required'] + ['!' + name
                                          for name in group['forbidden']]
            if traits:
                pairs.append(('required' + suffix, ','.join(traits)))
        return sorted(pairs)

    def query_string(self):
        return query_string(self.query_pairs())

    def describe(self):
        """Readable lines: the flavor, each group, the request-wide
        parameters and the notes."""
        flavor = self.flavor
        lines = ['Nova\'s request for flavor %s (%s): vcpus %s, ram %s MB, '
                 'disk %s GB, ephemeral %s GB, swap %s MB'
                 % (flavor.get('name'), flavor.get('id'),
                    flavor.get('vcpus'), flavor.get('ram'),
                    flavor.get('disk'), flavor.get(EPHEMERAL_KEY) or 0,
                    flavor.get('swap') or 0)]
        for suffix, group in self.groups.items():
            parts = ['resources ' + (', '.join(group['resources'])
                                     or '(none)')]
            if group['required']:
                parts.append('required ' + ', '.join(group['required']))
            if group['forbidden']:
                parts.append('forbidden ' + ', '.join(group['forbidden']))
            lines.append('  group %s: %s' % (
                suffix or '(unnamed)', '; '.join(parts)))
        if self.group_policy:
            lines.append('  group_policy: %s' % self.group_policy)
        if self.root_required:
            lines.append('  root provider: %s'
                         % ', '.join(self.root_required))
        lines += ['  note: %s' % note for note in self.notes]
        return lines


def query_string(pairs):
    """A query string, ``:,!`` unescaped: Placement reads them either way."""
    return parse.urlencode(list(pairs), safe=':,!')


def translate(flavor, owner_nova=False):
    """The ``FlavorRequest`` for ``flavor`` (Nova's flavor dict)."""
    builder = _Builder(flavor)
    builder.read_granular_specs()
    builder.translate_cpu_policy()
    builder.add_flavor_amounts()
    builder.translate_trait_specs()
    builder.strip_zeros()
    root = builder.root_traits(owner_nova)
    builder.check_groups_have_resources()
    builder.check_group_policy()
    return FlavorRequest(flavor, builder.export(), builder.group_policy,
                         root, builder.notes)


class _Group:
    def __init__(self):
        self.resources = {}
        self.required = []
        self.forbidden = []

    def add_trait(self, name, kind):
        names = self.required if kind == 'required' else self.forbidden
        if name not in names:
            names.append(name)

    def is_empty(self):
        return not (self.resources or self.required or self.forbidden)


class _Builder:
    """Nova's steps, in Nova's order: each one sees what the ones before
    it set (the flavor's own amounts only fill what is still unset)."""

    def __init__(self, flavor):
        self.flavor = flavor
        self.specs = dict(flavor.get('extra_specs') or {})
        self.groups = {}
        self.group_policy = None
        self.notes = []

    def group(self, suffix=UNSUFFIXED):
        return self.groups.setdefault(suffix or UNSUFFIXED, _Group())

    # --- resources*: trait*: group_policy

    def read_granular_specs(self):
        for key, value in self.specs.items():
            if key == 'group_policy':
                self._set_group_policy(value)
                continue
            match = _GRANULAR_KEY.match(key)
            if not match:
                continue
            prefix, suffix, name = match.groups()
            if prefix == 'resources':
                self._set_resource(key, name, value, suffix)
            else:
                self._add_trait(key, name, value, suffix)

    def _set_group_policy(self, value):
        if value in GROUP_POLICIES:
            self.group_policy = value
        else:
            self.notes.append('group_policy=%s ignored: Nova takes none '
                              'or isolate' % value)

    def _set_resource(self, key, rc, value, suffix):
        if not _CLASS_NAME.match(rc):
            self.notes.append('%s ignored: not a resource class name' % key)
            return
        amount = _non_negative_int(value)
        if amount is None:
            self.notes.append('%s=%s ignored: Nova takes a non-negative '
                              'integer' % (key, value))
            return
        self.group(suffix).resources[rc] = amount

    def _add_trait(self, key, name, value, suffix):
        if value not in ('required', 'forbidden'):
            self.notes.append('%s=%s ignored: Nova takes required or '
                              'forbidden' % (key, value))
            return
        self.group(suffix).add_trait(name, value)

    # --- CPU policies

    def translate_cpu_policy(self):
        """PCPU for dedicated CPUs, as Nova's API validates and its
        scheduler translates the pinning extra specs."""
        policy = self._choice('hw:cpu_policy', CPU_POLICIES)
        thread = self._choice('hw:cpu_thread_policy', THREAD_POLICIES)
        emulator = self._choice('hw:emulator_threads_policy',
                                EMULATOR_POLICIES)
        vcpus = int(self.flavor.get('vcpus') or 0)
        policy = self._check_explicit_cpus(policy, emulator, vcpus)
        thread = self._thread_policy_with_trait(thread)
        dedicated = self._dedicated_count(policy, emulator, vcpus)
        if policy in ('shared', None):
            if thread:
                raise FlavorRequestError(
                    'hw:cpu_thread_policy (or trait:%s) needs '
                    'hw:cpu_policy=dedicated or mixed; Nova refuses this '
                    'flavor' % HYPERTHREADING)
            if emulator == 'isolate':
                raise FlavorRequestError(
                    'hw:emulator_threads_policy=isolate needs '
                    'hw:cpu_policy=dedicated or mixed; Nova refuses this '
                    'flavor')
        explicit = self._explicit_cpus()
        if policy == 'dedicated' and not any(explicit):
            self._set_pcpus(vcpus, emulator)
        elif policy == 'mixed':
            self.group().resources[VCPU] = vcpus - dedicated
            self._set_pcpus(dedicated, emulator)
        if 'hw:cpu_thread_policy' in self.specs and thread in (
                'isolate', 'require'):
            self.group().add_trait(
                HYPERTHREADING,
                'forbidden' if thread == 'isolate' else 'required')

    def _set_pcpus(self, count, emulator):
        # The emulator threads get a dedicated CPU of their own.
        self.group().resources[PCPU] = count + (emulator == 'isolate')

    def _choice(self, key, allowed):
        value = self.specs.get(key)
        if value is None or value == '':
            return None
        if value not in allowed:
            raise FlavorRequestError('%s=%s: Nova takes one of %s'
                                     % (key, value, ', '.join(allowed)))
        return value

    def _explicit_cpus(self):
        """VCPU and PCPU asked for in resources[N]: specs, summed."""
        vcpu = pcpu = 0
        for suffix, group in self.groups.items():
            if _NUMBERED.match(suffix):
                vcpu += group.resources.get(VCPU, 0)
                pcpu += group.resources.get(PCPU, 0)
        return vcpu, pcpu

    def _check_explicit_cpus(self, policy, emulator, vcpus):
        vcpu, pcpu = self._explicit_cpus()
        if policy and (vcpu or pcpu):
            raise FlavorRequestError(
                'resources:VCPU or resources:PCPU with hw:cpu_policy: Nova '
                'refuses this flavor; use one or the other')
        if vcpu and pcpu:
            raise FlavorRequestError(
                'both resources:VCPU and resources:PCPU: Nova refuses this '
                'flavor; use one or the other')
        if pcpu:
            wanted = vcpus + (emulator == 'isolate')
            if pcpu != wanted:
                raise FlavorRequestError(
                    'resources:PCPU=%d where Nova wants exactly %d (the '
                    'flavor\'s vcpus%s): Nova refuses this flavor'
                    % (pcpu, wanted, ' + 1 for hw:emulator_threads_policy'
                       '=isolate' if emulator == 'isolate' else ''))
            return 'dedicated'
        if vcpu:
            return 'shared'
        return policy

    def _thread_policy_with_trait(self, thread):
        """trait[N]:HW_CPU_HYPERTHREADING stands for a thread policy."""
        trait = next((value for key, value in self.specs.items()
                      if re.match(r'^trait([1-9][0-9]*)?:%s$'
                                  % HYPERTHREADING, key)), None)
        if thread and trait:
            raise FlavorRequestError(
                'trait:%s with hw:cpu_thread_policy: Nova refuses this '
                'flavor; use one or the other' % HYPERTHREADING)
        if trait == 'forbidden':
            return 'isolate'
        if trait == 'required':
            return 'require'
        return thread

    def _dedicated_count(self, policy, emulator, vcpus):
        """How many CPUs of a mixed flavor are dedicated."""
        mask = self.specs.get('hw:cpu_dedicated_mask')
        realtime = self._realtime_cpus(policy, emulator, vcpus)
        if policy != 'mixed':
            if mask:
                raise FlavorRequestError(
                    'hw:cpu_dedicated_mask needs hw:cpu_policy=mixed; Nova '
                    'refuses this flavor')
            return 0
        if mask and realtime:
            raise FlavorRequestError(
                'hw:cpu_dedicated_mask with a realtime mask: Nova refuses '
                'this flavor; give one of them')
        if mask:
            return len(self._mask_cpus('hw:cpu_dedicated_mask', mask, vcpus))
        if realtime:
            return len(realtime)
        raise FlavorRequestError(
            'hw:cpu_policy=mixed needs hw:cpu_dedicated_mask or '
            'hw:cpu_realtime_mask; Nova refuses this flavor')

    def _realtime_cpus(self, policy, emulator, vcpus):
        if not _is_true(self.specs.get('hw:cpu_realtime')):
            return set()
        if policy in ('shared', None):
            raise FlavorRequestError(
                'hw:cpu_realtime needs hw:cpu_policy=dedicated or mixed; '
                'Nova refuses this flavor')
        mask = self.specs.get('hw:cpu_realtime_mask')
        cpus = (self._mask_cpus('hw:cpu_realtime_mask', mask, vcpus,
                                proper=False)
                if mask else set(range(vcpus)))
        if cpus == set(range(vcpus)) and not emulator:
            raise FlavorRequestError(
                'hw:cpu_realtime with every CPU realtime needs '
                'hw:emulator_threads_policy; Nova refuses this flavor')
        return cpus

    @staticmethod
    def _mask_cpus(key, mask, vcpus, proper=True):
        """The CPUs a mask names; ``^N`` excludes from all of them.
        A dedicated mask must leave some CPUs shared (``proper``)."""
        text = mask.strip()
        if text.startswith('^'):
            text = '0-%d,%s' % (vcpus - 1, text)
        cpus = parse_cpu_spec(key, text)
        every = set(range(vcpus))
        if not cpus or not cpus <= every or (proper and cpus == every):
            raise FlavorRequestError(
                '%s=%s must name %s of the flavor\'s %d CPUs (0-%d); Nova '
                'refuses this flavor'
                % (key, mask, 'some but not all' if proper else 'some',
                   vcpus, vcpus - 1))
        return cpus

    # --- The flavor's own amounts

    def add_flavor_amounts(self):
        merged = set()
        for group in self.groups.values():
            merged |= set(group.resources)
        unsuffixed = self.group()
        flavor = self.flavor
        if VCPU not in merged and PCPU not in merged:
            unsuffixed.resources[VCPU] = int(flavor.get('vcpus') or 0)
        if MEMORY_MB not in merged:
            unsuffixed.resources[MEMORY_MB] = int(flavor.get('ram') or 0)
        if DISK_GB not in merged:
            disk = disk_gb(flavor)
            if disk:
                unsuffixed.resources[DISK_GB] = disk

    # --- Extra specs that become traits (and a few classes)

    def translate_trait_specs(self):
        unsuffixed = self.group()
        self._translate_mem_encryption(unsuffixed)
        for label, count in self._pmem_labels().items():
            unsuffixed.resources[normalize_class('PMEM_NAMESPACE_'
                                                 + label)] = count
        for trait in self._vtpm_traits():
            unsuffixed.add_trait(trait, 'required')
        if self.specs.get('hw:pci_numa_affinity_policy') == 'socket':
            unsuffixed.add_trait('COMPUTE_SOCKET_PCI_NUMA_AFFINITY',
                                 'required')
        if self._choice('os:secure_boot',
                        ('required', 'disabled', 'optional')) == 'required':
            unsuffixed.add_trait('COMPUTE_SECURITY_UEFI_SECURE_BOOT',
                                 'required')
        mode = self._choice('hw:maxphysaddr_mode', tuple(MAXPHYSADDR_TRAITS))
        if mode:
            unsuffixed.add_trait(MAXPHYSADDR_TRAITS[mode], 'required')
        if self.specs.get('pci_passthrough:alias'):
            self.notes.append(
                'pci_passthrough:alias not translated: Nova asks Placement '
                'for PCI devices only with [filter_scheduler]'
                'pci_in_placement, from its PCI alias configuration')

    def _translate_mem_encryption(self, unsuffixed):
        if not _is_true(self.specs.get('hw:mem_encryption')):
            return
        model = self._choice('hw:mem_encryption_model',
                             tuple(MEM_ENCRYPTION_TRAITS)) or 'amd-sev'
        unsuffixed.resources['MEM_ENCRYPTION_CONTEXT'] = 1
        unsuffixed.add_trait(MEM_ENCRYPTION_TRAITS[model], 'required')
        self.notes.append('hw:mem_encryption: Nova also needs an image '
                          'with hw_firmware_type=uefi')

    def _pmem_labels(self):
        counts = {}
        for label in (self.specs.get('hw:pmem') or '').split(','):
            if label.strip():
                counts[label.strip()] = counts.get(label.strip(), 0) + 1
        return counts

    def _vtpm_traits(self):
        version = self._choice('hw:tpm_version', tuple(TPM_VERSION_TRAITS))
        if version is None:
            return []
        model = self._choice('hw:tpm_model', tuple(TPM_MODEL_TRAITS)) \
            or 'tpm-tis'
        if model == 'tpm-crb' and version != '2.0':
            raise FlavorRequestError(
                'hw:tpm_model=tpm-crb needs hw:tpm_version=2.0; Nova '
                'refuses this flavor')
        return [TPM_MODEL_TRAITS[model], TPM_VERSION_TRAITS[version]]

    def strip_zeros(self):
        for suffix, group in list(self.groups.items()):
            group.resources = {rc: amount for rc, amount
                               in group.resources.items() if amount}
            if group.is_empty():
                del self.groups[suffix]

    # --- Request-wide

    def root_traits(self, owner_nova):
        """``root_required``: Nova's request filters for a flavor."""
        if self.specs.get('accel:device_profile'):
            raise FlavorRequestError(
                'accel:device_profile=%s: the request groups of a Cyborg '
                'device profile come from Cyborg, which this command does '
                'not read' % self.specs['accel:device_profile'])
        required = []
        if _is_true(self.specs.get('hw:virtio_packed_ring')):
            required.append('COMPUTE_NET_VIRTIO_PACKED')
        if _is_true(self.specs.get('hw:ephemeral_encryption')):
            required.append('COMPUTE_EPHEMERAL_ENCRYPTION')
            fmt = self._choice('hw:ephemeral_encryption_format',
                               EPHEMERAL_FORMATS)
            if fmt:
                required.append('COMPUTE_EPHEMERAL_ENCRYPTION_'
                                + fmt.upper())
        if self.specs.get('hw:sound_model') == 'virtio':
            required.append('COMPUTE_SOUND_MODEL_VIRTIO')
        if self.specs.get('hw:tpm_version'):
            security = self._choice('hw:tpm_secret_security',
                                    tuple(TPM_SECRET_TRAITS)) or 'user'
            required.append(TPM_SECRET_TRAITS[security])
        if owner_nova:
            required.append(OWNER_TRAIT)
        return sorted(required) + ['!' + DISABLED_TRAIT]

    def check_groups_have_resources(self):
        """Nova sends ``resourcesN=`` empty for a group of traits only,
        which Placement refuses."""
        bare = sorted(suffix for suffix, group in self.groups.items()
                      if suffix and not group.resources)
        if bare:
            raise FlavorRequestError(
                'request group %s has traits but no resources: Placement '
                'refuses the request Nova sends for it (resources%s= is '
                'empty)' % (', '.join(bare), bare[0]))

    def check_group_policy(self):
        """Placement refuses several suffixed groups without a policy;
        Nova sends such a flavor's request all the same."""
        suffixed = [s for s in self.groups if s != UNSUFFIXED]
        if len(suffixed) > 1 and not self.group_policy:
            raise FlavorRequestError(
                'the flavor asks for %d request groups (%s) but has no '
                'group_policy extra spec: Placement refuses Nova\'s request '
                'and no server of it can be booted; set group_policy=none '
                'or isolate' % (len(suffixed), ', '.join(sorted(suffixed))))

    def export(self):
        """Groups in ``allocation_candidate.new_group``'s shape, the
        unsuffixed one first, then by suffix."""
        exported = {}
        for suffix in sorted(self.groups, key=lambda s: (s != '', s)):
            group = self.groups[suffix]
            exported[suffix] = {
                'resources': ['%s=%d' % item
                              for item in sorted(group.resources.items())],
                'required': sorted(group.required),
                'forbidden': sorted(group.forbidden),
                'member_of': [], 'aggregate_uuid': [], 'in_tree': None,
            }
        return exported


def disk_gb(flavor):
    """Root, ephemeral and swap disk in GB; swap (MB) rounded up."""
    swap_mb = int(flavor.get('swap') or 0)
    return (int(flavor.get('disk') or 0)
            + int(flavor.get(EPHEMERAL_KEY) or 0)
            + math.ceil(swap_mb / 1024))


def normalize_class(name):
    """``name`` as a custom resource class, as Nova names PMEM namespaces."""
    return 'CUSTOM_' + re.sub('[^A-Z0-9_]', '_', name.upper())


def parse_cpu_spec(key, spec):
    """``0-3,^2,5`` -> ``{0, 1, 3, 5}``: ranges and single CPUs, each
    with ``^`` to exclude it."""
    included, excluded = set(), set()
    for rule in (part.strip() for part in spec.split(',')):
        if not rule:
            continue
        target = included
        if rule.startswith('^'):
            target, rule = excluded, rule[1:]
        first, dash, last = rule.partition('-')
        try:
            start = int(first)
            end = int(last) if dash else start
        except ValueError:
            raise FlavorRequestError('%s: %r is not a CPU, a range or an '
                                     'exclusion' % (key, rule)) from None
        if start > end:
            raise FlavorRequestError('%s: %r is an empty range'
                                     % (key, rule))
        target.update(range(start, end + 1))
    return included - excluded


def _is_true(value):
    return str(value).strip().lower() in _TRUE if value is not None \
        else False


def _non_negative_int(value):
    try:
        amount = int(value)
    except (TypeError, ValueError):
        return None
    return amount if amount >= 0 else None
