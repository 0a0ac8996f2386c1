# SPDX-License-Identifier: Apache-2.0
"""Commands for inventories (``openstack resource provider inventory ...``).

``inventory set --aggregate`` writes to every provider of an aggregate with
the machinery of ``bulk``: concurrently, each provider with a
compare-and-swap on its generation, a lost race re-read and retried for that
provider only.
"""

from cliff import command
from cliff import lister
from cliff import show

from osc_placement.resources import bulk
from osc_placement.resources import common
from osc_placement import version

PROVIDERS_URL = '/resource_providers'
PROVIDER_URL = PROVIDERS_URL + '/{uuid}'
INVENTORIES_URL = PROVIDER_URL + '/inventories'
INVENTORY_URL = INVENTORIES_URL + '/{resource_class}'
USAGES_URL = PROVIDER_URL + '/usages'

# Inventory fields in upstream's column order: (name, type, help).
INVENTORY_FIELDS = (
    ('allocation_ratio', float,
     'Capacity is (total - reserved) * allocation_ratio; for example 8 '
     'VCPU with an allocation_ratio of 16.0 can serve 128 VCPU.'),
    ('min_unit', int,
     'The smallest amount a single allocation of this class can have.'),
    ('max_unit', int,
     'The largest amount a single allocation of this class can have.'),
    ('reserved', int,
     'The amount the provider keeps for its own use.'),
    ('step_size', int,
     'Allocations must be multiples of it; with step_size 5 only 5, 10, '
     '15, ... can be allocated.'),
    ('total', int,
     'The actual amount of the resource the provider has.'),
)
FIELD_TYPES = {name: kind for name, kind, _ in INVENTORY_FIELDS}
FIELDS = tuple(FIELD_TYPES)
DEFAULT_FIELD = 'total'
RESOURCE_COLUMNS = ('resource_class',) + FIELDS
USED_COLUMN = 'used'

RC_HELP = ('<resource_class> is a standard or deployer-specific (CUSTOM_*) '
           'kind of resource a provider has, for example VCPU, MEMORY_MB, '
           'DISK_GB.')

# Attempts per provider and concurrent requests for --aggregate: the
# shared bulk machinery's, named here too for inventory class set and tests.
MAX_ATTEMPTS = bulk.MAX_ATTEMPTS
WORKERS = common.WORKERS

# Options that need more than the command does: (dest, applies, feature).
SET_GATES = (
    ('aggregate', bool, 'member_of'),
)
# Without feature ``delete_all_inventories`` a provider's inventories can
# only be deleted one class at a time, so --resource-class is required.
RESOURCE_CLASS_REQUIRED = 'the following arguments are required: ' \
                          '--resource-class'


def parse_resource_argument(text):
    """``RC[:field]=value`` -> ``(RC, field, typed value)``.

    The texts of the errors are upstream's, which scripts look for.
    """
    parts = text.split('=')
    if len(parts) != 2:
        raise ValueError('Resource argument must have "name=value" format')
    name, raw_value = parts
    name_parts = name.split(':')
    if len(name_parts) > 2:
        raise ValueError('Resource argument can contain only one colon')
    resource_class = name_parts[0]
    field = name_parts[1] if len(name_parts) == 2 else DEFAULT_FIELD
    if not (resource_class and field and raw_value):
        raise ValueError('Name, field and value must be not empty')
    if field not in FIELD_TYPES:
        raise ValueError('Unknown inventory field %s' % field)
    return resource_class, field, _typed(text, field, raw_value)


def _typed(text, field, raw_value):
    kind = FIELD_TYPES[field]
    try:
        return kind(raw_value)
    except ValueError:
        expected = 'an integer' if kind is int else 'a number'
        raise ValueError('Resource argument %s: %s must be %s'
                         % (text, field, expected)) from None


def parse_resource_arguments(texts):
    """Parse every ``--resource`` before any request is sent."""
    return [parse_resource_argument(text) for text in texts]


def apply_resources(inventories, resources):
    """Set each parsed ``(RC, field, value)`` on a copy of ``inventories``."""
    merged = {rc: dict(fields) for rc, fields in inventories.items()}
    for resource_class, field, value in resources:
        merged.setdefault(resource_class, {})[field] = value
    return merged


def inventory_rows(inventories, prefix=()):
    """One row per class; fields the server did not send show empty."""
    return [prefix + common.dict_properties(
        dict(fields, resource_class=resource_class), RESOURCE_COLUMNS)
        for resource_class, fields in inventories.items()]


class ProviderInventoryWriter(bulk.ProviderWriter):
    """Writes the requested inventory to one provider.

    Retries as ``bulk.ProviderWriter`` does; with ``amend`` every attempt
    redoes the merge on what it read, so a concurrent change to another
    class is kept.
    """

    action = 'set inventory'

    def __init__(self, placement, resources, amend=False, dry_run=False):
        self.placement = placement
        self.resources = resources
        self.amend = amend
        self.dry_run = dry_run

    def _attempt(self, uuid, generation):
        current = None
        if self.amend or generation is None:
            current = self._read(uuid)
            generation = current['resource_provider_generation']
        payload = self._payload(current if self.amend else None, generation)
        if self.dry_run:
            return payload
        return self._write(uuid, payload)

    def _payload(self, current, generation):
        existing = current['inventories'] if current else {}
        return {'inventories': apply_resources(existing, self.resources),
                'resource_provider_generation': generation}

    def _read(self, uuid):
        return self.placement.request(
            'GET', INVENTORIES_URL.format(uuid=uuid)).json()

    def _write(self, uuid, payload):
        return self.placement.request(
            'PUT', INVENTORIES_URL.format(uuid=uuid), json=payload).json()


# What the server stores for a field a write leaves out (every field but
# total has one), so that a replace that restates a class is not taken
# for a change.
FIELD_DEFAULTS = {'allocation_ratio': 1.0, 'min_unit': 1,
                  'max_unit': 2147483647, 'reserved': 0, 'step_size': 1}


class InventoryEdit(bulk.BulkEdit):
    """``inventory set`` planned on every provider of an aggregate.

    Reads each provider's inventories and writes them through
    ``ProviderInventoryWriter``. A class the
    new inventories lack is removed (``-``); one whose fields differ is
    changed (``~``).
    """

    action = ProviderInventoryWriter.action
    nouns = 'inventory classes'

    def __init__(self, placement, resources, amend=False):
        self.writer = ProviderInventoryWriter(placement, resources,
                                              amend=amend)
        self.resources = resources
        self.amend = amend

    def read(self, uuid):
        body = self.writer._read(uuid)
        return bulk.State(body['resource_provider_generation'],
                          body['inventories'])

    def target(self, current):
        return apply_resources(current if self.amend else {},
                               self.resources), ()

    def diff(self, current, new):
        changes = []
        for resource_class, fields in new.items():
            if resource_class not in current:
                changes.append((bulk.ADDED, resource_class))
            elif with_defaults(fields) != with_defaults(
                    current[resource_class]):
                changes.append((bulk.CHANGED, resource_class))
        return changes + [(bulk.REMOVED, resource_class)
                          for resource_class in current
                          if resource_class not in new]

    def write(self, uuid, generation, new):
        return self.writer._write(uuid, {
            'inventories': new,
            'resource_provider_generation': generation})['inventories']


def with_defaults(fields):
    """An inventory's fields as the server keeps them."""
    return dict(FIELD_DEFAULTS, **fields)


def inventory_plan_row(plan, sign, resource_class):
    """A dry run's fields for a class: as it would be, or as it was for a
    class removed."""
    source = plan.state.current if sign == bulk.REMOVED else plan.new
    fields = source[resource_class]
    if sign != bulk.REMOVED:
        fields = with_defaults(fields)
    return common.dict_properties(
        dict(fields, resource_class=resource_class), RESOURCE_COLUMNS)


def _add_provider_argument(parser, help_text=common.NAME_OR_UUID_HELP):
    parser.add_argument('uuid', metavar='<uuid>', help=help_text)


def _resource_help():
    fields = '\n'.join('%s - %s' % (name, text)
                       for name, _, text in INVENTORY_FIELDS)
    return ('String describing resource.\n' + RC_HELP + '\n'
            '<inventory_field> (optional, default total) can be:\n' + fields)


class SetInventory(common.PlacementCommand, lister.Lister):
    """Replace the set of inventory records for the resource provider.

    By default this is a full replacement of the existing inventory:
    classes not given are removed. To keep the existing inventory and add
    or change classes, give --amend; --dry-run shows the result without
    writing anything.

    A resource given without a field sets its total, i.e.
    --resource VCPU=16 is --resource VCPU:total=16.

    With --aggregate the positional UUID is an aggregate, and every
    provider in it is set, several at a time, with these safeguards:

    - Sharing providers (trait MISC_SHARES_VIA_AGGREGATE, such as a shared
      disk) are left alone unless --include-sharing is given.
    - Every provider is read first. A replace that would remove an
      inventory class from any provider is shown and needs confirmation:
      "y" at the prompt on a terminal, or --yes. Without either, nothing
      is changed and the command exits 1. --amend removes nothing.
    - --dry-run shows each class that would be added (+), changed (~) or
      removed (-), by provider name and UUID, and changes nothing.

    This is not atomic: a provider that fails is reported, with the
    providers that were changed, and the command then fails with "Failed
    to set inventory for N of M resource providers." Each provider is
    written with its generation, so a failed one is left as it was.

    Examples::

        # Set one provider's inventory:
        openstack resource provider inventory set <name or uuid> \\
            --resource VCPU=16 --resource MEMORY_MB=2048 \\
            --resource MEMORY_MB:step_size=128
        # Change the VCPU allocation ratio of every host in an aggregate:
        openstack resource provider inventory set <aggregate> --aggregate \\
            --amend --resource VCPU:allocation_ratio=4.0 --dry-run
        openstack resource provider inventory set <aggregate> --aggregate \\
            --amend --resource VCPU:allocation_ratio=4.0
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        bulk.add_provider_or_aggregate_argument(parser)
        parser.add_argument(
            '--resource', metavar='<resource_class>:<inventory_field>=<value>',
            default=[], action='append', help=_resource_help())
        parser.add_argument(
            '--aggregate', action='store_true',
            help=version.render(
                'Set the inventories of every resource provider in the '
                'aggregate. Not atomic: see above. This option requires at '
                'least ``--os-placement-api-version {member_of}``'))
        parser.add_argument(
            '--amend', action='store_true',
            help='Amend the inventories instead of replacing them')
        parser.add_argument(
            '--dry-run', action='store_true',
            help='Show the inventories that would be set, without setting '
                 'them; with --aggregate, show each class added (+), '
                 'changed (~) or removed (-) per resource provider')
        bulk.add_bulk_safety_arguments(parser, 'inventory classes')
        self._parser = parser
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, SET_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        bulk.check_bulk_only_options(self._parser, parsed_args)
        resources = parse_resource_arguments(parsed_args.resource)
        if parsed_args.aggregate:
            return self._set_aggregate(parsed_args, resources)
        writer = ProviderInventoryWriter(self.placement, resources,
                                         amend=parsed_args.amend,
                                         dry_run=parsed_args.dry_run)
        provider = self.get_json(PROVIDER_URL.format(
            uuid=common.provider_uuid(self, parsed_args.uuid)))
        result = writer(provider)
        return RESOURCE_COLUMNS, inventory_rows(result['inventories'])

    def _set_aggregate(self, parsed_args, resources):
        edit = InventoryEdit(self.placement, resources,
                             amend=parsed_args.amend)
        plans, outcomes = bulk.edit_aggregate(self, parsed_args, edit,
                                              'Setting inventory')
        if outcomes is None and not bulk.upstream_bulk_edits():
            return (bulk.PLAN_COLUMNS + RESOURCE_COLUMNS,
                    bulk.plan_rows(plans, inventory_plan_row))
        # The inventories each provider has afterwards (or, dry, would
        # have, with the fields a replace leaves to the server empty).
        after = ([plan.new for plan in plans] if outcomes is None
                 else [outcome.current for outcome in outcomes])
        rows = []
        for plan, inventories in zip(plans, after):
            rows += inventory_rows(inventories, prefix=(plan.uuid,))
        return ('resource_provider',) + RESOURCE_COLUMNS, rows


class SetClassInventory(common.PlacementCommand, show.ShowOne):
    """Replace the inventory record of one class for the resource provider.

    Other classes are left alone. Fields not given take the server's
    defaults.

    Example::

        openstack resource provider inventory class set <uuid> VCPU \\
            --total 16 \\
            --max_unit 4 \\
            --reserved 1
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_provider_argument(parser)
        parser.add_argument('resource_class', metavar='<class>',
                            help=RC_HELP)
        # The option names keep the underscores of the API's field names,
        # as upstream spells them.
        for name, kind, text in INVENTORY_FIELDS:
            parser.add_argument('--' + name, metavar='<%s>' % name,
                                type=kind, required=name == 'total',
                                help=text)
        return parser

    def take_action(self, parsed_args):
        fields = {name: getattr(parsed_args, name) for name in FIELDS
                  if getattr(parsed_args, name) is not None}
        uuid = common.provider_uuid(self, parsed_args.uuid)
        url = INVENTORY_URL.format(uuid=uuid,
                                   resource_class=parsed_args.resource_class)
        inventory = self._put_with_fresh_generation(uuid, url, fields)
        return FIELDS, common.dict_properties(inventory, FIELDS)

    def _put_with_fresh_generation(self, uuid, url, fields):
        for attempt in range(1, MAX_ATTEMPTS + 1):
            provider = self.get_json(PROVIDER_URL.format(uuid=uuid))
            body = dict(fields,
                        resource_provider_generation=provider['generation'])
            try:
                return self.placement.request('PUT', url, json=body).json()
            except Exception as exc:
                if attempt == MAX_ATTEMPTS or \
                        not common.is_generation_conflict(exc):
                    raise


class ListInventory(common.PlacementCommand, lister.Lister):
    """List inventories of a resource provider, with the amount used."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_provider_argument(parser)
        return parser

    def take_action(self, parsed_args):
        uuid = common.provider_uuid(self, parsed_args.uuid)
        inventories = self.get_json(
            INVENTORIES_URL.format(uuid=uuid))['inventories']
        usages = self.get_json(USAGES_URL.format(uuid=uuid))['usages']
        rows = [row + (usages.get(row[0], 0),)
                for row in inventory_rows(inventories)]
        return RESOURCE_COLUMNS + (USED_COLUMN,), rows


class ShowInventory(common.PlacementCommand, show.ShowOne):
    """Show the inventory of one class of a resource provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_provider_argument(parser)
        parser.add_argument('resource_class', metavar='<resource_class>',
                            help=RC_HELP)
        return parser

    def take_action(self, parsed_args):
        uuid = common.provider_uuid(self, parsed_args.uuid)
        resource_class = parsed_args.resource_class
        inventory = self.get_json(INVENTORY_URL.format(
            uuid=uuid, resource_class=resource_class))
        usages = self.get_json(USAGES_URL.format(uuid=uuid))['usages']
        inventory[USED_COLUMN] = usages.get(resource_class, 0)
        columns = FIELDS + (USED_COLUMN,)
        return columns, common.dict_properties(inventory, columns)


class DeleteInventory(common.PlacementCommand, command.Command):
    """Delete inventory of a resource provider.

    With ``--resource-class``, delete that class only; without it, delete
    every class of the provider, which requires at least
    ``--os-placement-api-version {delete_all_inventories}``.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_provider_argument(parser)
        parser.add_argument(
            '--resource-class', metavar='<resource_class>',
            required=self._resource_class_required_now(),
            help=RC_HELP + version.render(
                '\nThis argument can be omitted starting with '
                '``--os-placement-api-version {delete_all_inventories}``. If '
                'it is omitted all inventories of the specified resource '
                'provider will be deleted.'))
        # Kept to report a missing --resource-class the way argparse does,
        # once the negotiated version is known.
        self._parser = parser
        return parser

    def _resource_class_required_now(self):
        """Required without ``delete_all_inventories``, when that is known
        without negotiating."""
        requested = version.requested_version(self.app)
        return requested is not None and not version.supports(
            requested, 'delete_all_inventories')

    def take_action(self, parsed_args):
        delete_all = parsed_args.resource_class is None
        if delete_all and not version.supports(version.get_version(self),
                                               'delete_all_inventories'):
            self._parser.error(RESOURCE_CLASS_REQUIRED)
        uuid = common.provider_uuid(self, parsed_args.uuid)
        if delete_all:
            url = INVENTORIES_URL.format(uuid=uuid)
        else:
            url = INVENTORY_URL.format(
                uuid=uuid, resource_class=parsed_args.resource_class)
        self.placement.request('DELETE', url)
