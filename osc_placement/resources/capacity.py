# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider capacity list``: the room left in a cloud.

Everything comes from the public API: one ``GET /resource_providers``
with the filters, then each provider's inventories and usages, read
concurrently. With ``--fit`` it counts how many more requests of one
shape fit in each tree, by the rule doc/source/user/capacity.rst states:
exact for what ``PUT /allocations`` accepts, and for the total never
more than can be placed together.
"""

import itertools
import logging

from cliff import lister
from osc_lib import exceptions

from osc_placement import explain
from osc_placement import provider_rules
from osc_placement.resources import common
from osc_placement.resources import flavor as flavor_option
from osc_placement.resources import providers
from osc_placement import version

LOG = logging.getLogger(__name__)

PROVIDERS_URL = providers.PROVIDERS_URL
PROVIDER_URL = providers.PROVIDER_URL
RESOURCE_CLASSES_URL = '/resource_classes'

# The provider (and name) of the totals rows.
TOTAL = '(total)'

CAPACITY_COLUMNS = ('uuid', 'name', 'resource_class', 'total', 'reserved',
                    'allocation_ratio', 'capacity', 'used', 'free',
                    'used_percent')
FIT_COLUMNS = ('uuid', 'name', 'fit')

# Options that need more than the command does: (dest, applies, feature),
# in the order they are checked.
GATES = (
    ('aggregate', bool, 'member_of'),
    ('in_tree', bool, 'nested_providers'),
    ('required', bool, 'provider_required'),
    ('required', common.required_needs_any_of, 'any_of_traits'),
    ('forbidden', bool, 'forbidden_traits'),
    ('member_of', bool, 'member_of'),
    ('member_of', lambda values: len(values) > 1, 'repeated_member_of'),
    ('member_of', common.forbids_aggregates, 'forbidden_aggregates'),
    # Trees need root_provider_uuid (nested providers); sharing providers
    # are found by their trait (required traits on provider lists), which
    # came later.
    ('fit', bool, 'provider_required'),
)

# Nova asks for hosts without it; --fit says so when the user did not.
DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'
DISABLED_NOTE = ('counts include disabled hosts: Nova adds !%s; pass '
                 '--forbidden %s' % (DISABLED_TRAIT, DISABLED_TRAIT))

# ``--fit`` without a value: the amounts come from --flavor.
FIT_FROM_FLAVOR = object()

FIT_SYNTAX = ('--fit must be RESOURCE_CLASS=AMOUNT[,RESOURCE_CLASS=AMOUNT...]'
              ' with positive integer amounts, for example '
              'VCPU=4,MEMORY_MB=8192,DISK_GB=40')


# --- Arithmetic -----------------------------------------------------------

def slots(inventory, used, amount):
    """How many more allocations of ``amount`` the inventory can take."""
    if not provider_rules.accepts(inventory, amount):
        return 0
    return max(0, (provider_rules.capacity(inventory) - used) // amount)


def parse_fit(text):
    """``VCPU=4,MEMORY_MB=8192`` -> ``{'VCPU': 4, 'MEMORY_MB': 8192}``."""
    request = {}
    for part in text.split(','):
        name, sep, amount = part.strip().partition('=')
        name = name.strip()
        if not (sep and name and amount.strip().isdigit()
                and int(amount) > 0):
            raise exceptions.CommandError('%s; got %r' % (FIT_SYNTAX, text))
        if name in request:
            raise exceptions.CommandError(
                '--fit names %s twice; got %r' % (name, text))
        request[name] = int(amount)
    return request


# --- Capacity rows --------------------------------------------------------

def used_percent(used, capacity):
    # Empty, as a field the server did not send, when nothing can be used.
    return round(100.0 * used / capacity, 1) if capacity > 0 else ''


def provider_rows(provider, inventories, usages, classes=None):
    """One row per class of one provider (only ``classes`` if given)."""
    rows = []
    for rc in sorted(inventories):
        if classes and rc not in classes:
            continue
        inventory = inventories[rc]
        capacity = provider_rules.capacity(inventory)
        used = usages.get(rc, 0)
        rows.append((provider['uuid'], provider['name'], rc,
                     inventory['total'], inventory['reserved'],
                     inventory['allocation_ratio'], capacity, used,
                     capacity - used, used_percent(used, capacity)))
    return rows


def total_rows(rows):
    """A totals row per class, classes sorted by name."""
    sums = {}
    for row in rows:
        rc, total, reserved, _, capacity, used, free = row[2:9]
        acc = sums.setdefault(rc, [0, 0, 0, 0, 0])
        for index, value in enumerate((total, reserved, capacity, used,
                                       free)):
            acc[index] += value
    # A sum of ratios means nothing: the totals row leaves it empty.
    return [(TOTAL, TOTAL, rc, total, reserved, '', capacity, used, free,
             used_percent(used, capacity))
            for rc, (total, reserved, capacity, used, free)
            in sorted(sums.items())]


def sort_by_free(rows):
    """Least free room first; ties by provider and class."""
    return sorted(rows, key=lambda row: (row[8], row[0], row[2]))


# --- Fit ------------------------------------------------------------------

class FitCounter:
    """Counts the claims of one request per tree, and in total.

    ``trees``: root uuid -> uuids of the tree's providers; ``sharing``:
    root uuid -> uuids of the sharing providers outside the tree that serve
    it; ``pools``: provider uuid -> {class: slots for the requested
    amount}. See the module's docstring for the rule.

    ``combos``: root uuid -> the only ``{class: provider}`` choices a claim
    on that tree may make, for the trees whose required traits tie the
    classes together (no single provider holds them all); any other tree
    takes each class from any of its providers.
    """

    def __init__(self, request, trees, sharing, pools, combos=None):
        self.classes = list(request)
        self.trees = trees
        self.sharing = sharing
        self.pools = pools
        self.combos = combos or {}

    def _sum(self, providers, rc, pools):
        return sum(pools.get(p, {}).get(rc, 0) for p in providers)

    def per_tree(self, root):
        """Claims the tree alone could take, its sharing providers' room
        all to itself."""
        if root in self.combos:
            return self._claims_one_by_one([root])
        providers = list(self.trees[root]) + list(self.sharing.get(root, ()))
        return min(self._sum(providers, rc, self.pools)
                   for rc in self.classes)

    def total(self):
        """Claims that all fit at once, shared room counted once: the larger of
        two greedy orders, as neither wins on every layout; trees whose classes
        are tied by traits are placed claim by claim only."""
        if self.combos:
            return self._round_robin()
        return max(self._own_room_first(), self._round_robin())

    def _claims_one_by_one(self, roots):
        pools = {p: dict(room) for p, room in self.pools.items()}
        placed = 0
        for root in roots:
            while True:
                choice = self._one_claim(root, pools)
                if choice is None:
                    break
                for rc, provider in choice.items():
                    pools[provider][rc] -= 1
                placed += 1
        return placed

    def _own_room_first(self):
        pools = {p: dict(room) for p, room in self.pools.items()}
        placed = 0
        # Own providers first, so no tree eats shared room it did not need.
        for members in self.trees.values():
            own = min(self._sum(members, rc, pools) for rc in self.classes)
            for rc in self.classes:
                self._take(own, members, rc, pools)
            placed += own
        for root, members in self.trees.items():
            shared = list(self.sharing.get(root, ()))
            extra = min(self._sum(members, rc, pools)
                        + self._sum(shared, rc, pools)
                        for rc in self.classes)
            for rc in self.classes:
                left = self._take(extra, members, rc, pools)
                self._take(left, shared, rc, pools)
            placed += extra
        return placed

    def _round_robin(self):
        """One claim per tree in turn, each class from the provider serving
        the tree with the most slots left; a tree that cannot take one
        more drops out."""
        pools = {p: dict(room) for p, room in self.pools.items()}
        placed = 0
        active = list(self.trees)
        while active:
            for root in list(active):
                choice = self._one_claim(root, pools)
                if choice is None:
                    active.remove(root)
                    continue
                for rc, provider in choice.items():
                    pools[provider][rc] -= 1
                placed += 1
        return placed

    def _one_claim(self, root, pools):
        """{class: provider} for one more claim on the tree, or None."""
        if root in self.combos:
            return self._best_combo(self.combos[root], pools)
        providers = list(self.trees[root]) + list(self.sharing.get(root, ()))
        choice = {}
        for rc in self.classes:
            best = max(providers, key=lambda p: pools.get(p, {}).get(rc, 0),
                       default=None)
            if best is None or pools.get(best, {}).get(rc, 0) <= 0:
                return None
            choice[rc] = best
        return choice

    @staticmethod
    def _best_combo(combos, pools):
        """The allowed choice whose scarcest slot is the most plentiful,
        or None when none has room left."""
        def scarcest(choice):
            return min(pools.get(p, {}).get(rc, 0)
                       for rc, p in choice.items())
        best = max(combos, key=scarcest, default=None)
        return best if best is not None and scarcest(best) > 0 else None

    @staticmethod
    def _take(count, providers, rc, pools):
        """Take ``count`` slots of ``rc``, most room first; return what
        could not be taken."""
        for provider in sorted(providers,
                               key=lambda p: -pools.get(p, {}).get(rc, 0)):
            room = pools.get(provider, {}).get(rc, 0)
            taken = min(room, count)
            if taken:
                pools[provider][rc] = room - taken
                count -= taken
            if not count:
                break
        return count


# --- The command ----------------------------------------------------------

class ListCapacity(common.PlacementCommand, lister.Lister):
    """List the capacity, usage and free room of resource providers.

    One row per provider and resource class: total, reserved,
    allocation_ratio, capacity (``int((total - reserved) *
    allocation_ratio)``, as Placement computes it), used, free (capacity -
    used, negative when a provider is overcommitted) and used_percent;
    then one totals row per class, whose uuid and name are ``(total)``.
    Rows are in the order the server lists the providers, classes by name;
    ``--sort-by-free`` puts the least free room first (the totals rows stay
    last).

    With ``--fit`` the output is one row per provider tree (its root's uuid
    and name) with the number of further requests of that shape the tree
    can take (column ``fit``), then a ``(total)`` row. A request takes each
    class from one provider of the tree or from a sharing provider
    (MISC_SHARES_VIA_AGGREGATE) in an aggregate with a provider of the
    tree, within that inventory's min_unit, max_unit and step_size: a
    request larger than max_unit fits 0 times. A tree's figure counts its
    sharing providers' room as if they served that tree only; the total
    counts shared room once (its own providers first for every tree, then
    shared room tree by tree), so it can be less than the sum of the trees.
    --aggregate and --in-tree choose the trees: a tree is counted when one
    of its providers matches. With --fit, --required, --forbidden and
    --member-of are the request's filters, judged as Placement judges the
    unsuffixed request group: traits on the providers that supply the
    request together, aggregates on the provider or its tree's root (a
    sharing provider: itself). A note on stderr says when disabled hosts
    (COMPUTE_STATUS_DISABLED, which Nova forbids) are counted.

    ``--flavor`` counts a Nova flavor as Nova's scheduler asks for it: its
    resources, its traits, and no tree whose root is disabled
    (``--show-request`` prints the request on stderr).

    Providers are read 10 at a time (two requests each: inventories and
    usages); a progress line is shown on stderr when it is a terminal.

    Examples::

        # Capacity and use of one host's tree:
        openstack resource provider capacity list --in-tree compute-1
        # How many more of a flavor Nova could place in an aggregate:
        openstack resource provider capacity list \\
            --fit VCPU=4,MEMORY_MB=8192,DISK_GB=40 \\
            --forbidden COMPUTE_STATUS_DISABLED --member-of <aggregate_uuid>
        # The same for the flavor itself, as Nova asks for it:
        openstack resource provider capacity list --flavor m1.large \\
            --member-of <aggregate_uuid>
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--aggregate', metavar='<aggregate_uuid>',
            help=version.render(
                'Only providers in this aggregate. This option requires at '
                'least ``--os-placement-api-version {member_of}``.'))
        parser.add_argument(
            '--in-tree', metavar='<name_or_uuid>',
            help=version.render(
                'Only providers in the tree of this provider (name or '
                'UUID); with --fit, that tree alone is counted, the sharing '
                'providers that serve it included. This option requires at '
                'least ``--os-placement-api-version {nested_providers}``.'))
        parser.add_argument(
            '--required', metavar='<trait>', action='append', default=[],
            help=version.render(
                'Only providers with this trait; with --fit, trees whose '
                'providers that supply the request hold it together, as '
                'Placement judges the unsuffixed request group. May be '
                'repeated; a comma-separated list means any of these traits '
                'and needs ``--os-placement-api-version {any_of_traits}``. '
                'This option requires at least '
                '``--os-placement-api-version {provider_required}``.'))
        parser.add_argument(
            '--forbidden', metavar='<trait>', action='append', default=[],
            help=version.render(
                'Only providers without this trait; with --fit, no provider '
                'with it supplies the request (Nova forbids '
                'COMPUTE_STATUS_DISABLED). May be repeated. This option '
                'requires at least '
                '``--os-placement-api-version {forbidden_traits}``.'))
        parser.add_argument(
            '--member-of', metavar='<member_of>', action='append',
            default=[],
            help=version.render(
                'Only providers in one of these comma-separated aggregates; '
                'a value starting with "!" excludes them '
                '({forbidden_aggregates}). May be repeated '
                '({repeated_member_of}): every value must hold. With --fit, '
                'as Placement\'s member_of: a provider counts when it or its '
                'tree\'s root is in the aggregates, a sharing provider when '
                'it is. This option requires at least '
                '``--os-placement-api-version {member_of}``.'))
        shape = parser.add_mutually_exclusive_group()
        shape.add_argument(
            '--resource-class', metavar='<resource_class>', action='append',
            default=[],
            help='Only rows of this resource class. May be repeated.')
        shape.add_argument(
            '--fit', metavar='<resource_class>=<amount>[,...]', nargs='?',
            const=FIT_FROM_FLAVOR,
            help=version.render(
                'Count, per provider tree, how many more requests of this '
                'shape fit, e.g. VCPU=4,MEMORY_MB=8192,DISK_GB=40 (see '
                'above); without a value, those of --flavor. This option '
                'requires at least '
                '``--os-placement-api-version {provider_required}``.'))
        flavor_option.add_options(parser, flavor_option.FIT_HELP)
        parser.add_argument(
            '--sort-by-free', action='store_true',
            help='Sort rows by free room, least first (with --fit: by fit, '
                 'least first).')
        return parser

    def take_action(self, parsed_args):
        request = self._fit_request(parsed_args)
        for feature in common.needed_features(parsed_args, GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        self._check_classes(parsed_args.resource_class or list(request or ()))
        if parsed_args.in_tree:
            parsed_args.in_tree = common.provider_uuid(
                self, parsed_args.in_tree)
        listed = self.get_json(PROVIDERS_URL, **self._query(
            parsed_args, filters=not request))['resource_providers']
        if not listed and parsed_args.in_tree:
            self._check_provider_exists(parsed_args.in_tree)
        if request:
            return self._fit(parsed_args, request, listed)
        return self._capacity(parsed_args, listed)

    def _note_no_provider(self, parsed_args):
        """Say why nothing is counted: an empty table, or a total of 0
        with --fit, would read as a cloud without room."""
        filters = [name for name, value in (
            ('--aggregate', parsed_args.aggregate),
            ('--member-of', parsed_args.member_of),
            ('--required', parsed_args.required),
            ('--forbidden', parsed_args.forbidden),
            ('--in-tree', parsed_args.in_tree)) if value]
        self.app.stderr.write(
            'Note: no resource provider matches the filters (%s).\n'
            % ', '.join(filters) if filters
            else 'Note: there is no resource provider.\n')

    def _fit_request(self, parsed_args):
        """``{class: amount}`` to count, from --fit or --flavor; None
        for the capacity rows."""
        value = parsed_args.fit
        from_flavor = value is FIT_FROM_FLAVOR
        flavor_option.check_flavor_options(
            parsed_args,
            bool((value is not None and not from_flavor)
                 or parsed_args.resource_class),
            flavor_option.FIT_OPTIONS)
        parsed_args.root_required = []
        if not parsed_args.flavor:
            if from_flavor:
                raise exceptions.CommandError(
                    '--fit needs a value, for example '
                    'VCPU=4,MEMORY_MB=8192,DISK_GB=40, or --flavor.')
            return parse_fit(value) if value is not None else None
        wanted = flavor_option.read_request(self, parsed_args)
        request = flavor_option.fit_request(wanted, parsed_args.flavor)
        if not request:
            raise exceptions.CommandError(
                'Flavor %s asks for no resources: there is nothing to '
                'count.' % parsed_args.flavor)
        flavor_option.apply_to_fit_args(parsed_args, wanted)
        flavor_option.show_request(self.app.stderr, wanted,
                                   wanted.query_pairs(),
                                   parsed_args.show_request)
        # What --fit's gates and counting read.
        parsed_args.fit = ','.join('%s=%d' % item for item in request.items())
        return request

    @staticmethod
    def _query(parsed_args, filters=True):
        """The provider list's query: which providers, or with --fit
        (``filters`` False) which trees; --fit judges the request's own
        filters itself."""
        member_of = [parsed_args.aggregate] if parsed_args.aggregate else []
        query = {'in_tree': parsed_args.in_tree}
        if filters:
            member_of += common.member_of_query(parsed_args.member_of, None,
                                                LOG)
            query['required'] = common.required_query(
                parsed_args.required, parsed_args.forbidden)
        # A bare uuid, as ``inventory set --aggregate`` sends it: the
        # first member_of filter accepts no "in:".
        query['member_of'] = member_of
        return {key: value for key, value in query.items() if value}

    def _check_classes(self, classes):
        """Refuse a class the server does not know, before reading more.

        A server without custom resource classes knows only the standard
        ones, and cannot list them.
        """
        if not classes or not version.supports(version.get_version(self),
                                               'resource_classes'):
            return
        known = {rc['name'] for rc in self.get_json(
            RESOURCE_CLASSES_URL)['resource_classes']}
        unknown = [rc for rc in classes if rc not in known]
        if unknown:
            raise exceptions.CommandError(
                'No such resource class: %s.' % ', '.join(unknown))

    def _check_provider_exists(self, uuid):
        """The 404 of an unknown provider: its ``in_tree`` would look full."""
        self.get_json(PROVIDER_URL.format(uuid=uuid))

    # Reading providers

    def _read_providers(self, uuids):
        """{uuid: (inventories, usages)}, read concurrently; a provider
        deleted meanwhile is left out. The usages of many providers come
        from allocation candidates' summaries where those cover them."""
        inventories = self._read_part(uuids, 'inventories')
        usages = self._summary_usages(inventories)
        usages.update(self._read_part(
            [uuid for uuid in inventories if uuid not in usages], 'usages'))
        return {uuid: (inventories[uuid], usages[uuid])
                for uuid in inventories if uuid in usages}

    def _read_part(self, uuids, part):
        read = providers.read_parts(
            self.get_json, uuids, (part,),
            common.StderrProgress('Reading %s' % part), skip_missing=True)
        return {uuid: parts[part] for uuid, parts in read.items()}

    def _summary_usages(self, inventories):
        if len(inventories) < providers.SUMMARIES_FROM or not (
                version.supports(version.get_version(self),
                                 'nested_candidates')):
            return {}
        return providers.usages_from_summaries(
            lambda resources: self.get_json(providers.CANDIDATES_URL,
                                            resources=resources),
            inventories)

    # Capacity rows

    def _capacity(self, parsed_args, listed):
        read = self._read_providers([p['uuid'] for p in listed])
        rows = []
        for provider in listed:
            if provider['uuid'] in read:
                rows += provider_rows(provider, *read[provider['uuid']],
                                      classes=parsed_args.resource_class)
        if not listed:
            self._note_no_provider(parsed_args)
        elif not rows:
            self.app.stderr.write(
                'Note: %d resource provider(s) match, with no inventory%s.\n'
                % (len(listed), ' of ' + ', '.join(parsed_args.resource_class)
                   if parsed_args.resource_class else ''))
        if parsed_args.sort_by_free:
            rows = sort_by_free(rows)
        return CAPACITY_COLUMNS, rows + total_rows(rows)

    # Fit

    def _fit(self, parsed_args, request, listed):
        everyone = listed
        if self._query(parsed_args, filters=False):
            # Filters select trees; their other providers are needed too.
            everyone = self.get_json(PROVIDERS_URL)['resource_providers']
        roots = list(dict.fromkeys(p['root_provider_uuid'] for p in listed))
        if parsed_args.root_required:
            roots = self._roots_passing(roots, parsed_args.root_required)
        trees = {root: [] for root in roots}
        names = {}
        for provider in everyone:
            names[provider['uuid']] = provider['name']
            if provider['root_provider_uuid'] in trees:
                trees[provider['root_provider_uuid']].append(provider['uuid'])
        sharing = self._sharing_providers(trees)
        group = self._request_group(parsed_args, request)
        combos = {}
        if _has_filters(group):
            filtered = RequestFilter(self, group, everyone, sharing)
            trees, sharing, combos = filtered.apply(trees, request)
            roots = [root for root in roots if root in trees]
        if not roots:
            self._note_no_provider(parsed_args)
        elif not parsed_args.root_required:
            self._note_disabled(group, trees)
        wanted = set().union(*trees.values(), *sharing.values())
        read = self._read_providers(sorted(wanted))
        pools = {uuid: {rc: slots(inventories[rc], usages.get(rc, 0), amount)
                        for rc, amount in request.items()
                        if rc in inventories}
                 for uuid, (inventories, usages) in read.items()}
        if combos:
            combos = {root: tied(pools) for root, tied in combos.items()}
        counter = FitCounter(request, trees, sharing, pools, combos)
        rows = [(root, names.get(root, ''), counter.per_tree(root))
                for root in roots]
        if parsed_args.sort_by_free:
            rows.sort(key=lambda row: (row[2], row[0]))
        return FIT_COLUMNS, rows + [(TOTAL, TOTAL, counter.total())]

    def _request_group(self, parsed_args, request):
        """The unsuffixed request group --fit counts, as explain.py reads
        the query ``allocation candidate list`` would send."""
        pairs = [('resources', ','.join('%s:%d' % item
                                        for item in request.items()))]
        pairs += [('required', value) for value in common.required_query(
            parsed_args.required, parsed_args.forbidden)]
        pairs += [('member_of', value) for value in common.member_of_query(
            parsed_args.member_of, None, LOG)]
        # --in-tree picks the tree to count, its sharing providers
        # included as Nova's requests (without in_tree) use them.
        ver = version.as_tuple(version.get_version(self))
        return explain.parse_query(pairs, ver).groups[0]

    def _roots_passing(self, roots, root_required):
        """The roots that have the traits ``root_required`` names and not
        those it names with ``!``: Placement's rule for the root of each
        candidate's tree (a sharing provider serving it is not judged)."""
        names = sorted({name.lstrip('!') for name in root_required})
        holders = _holders(self, 'required', names)
        return [root for root in roots
                if root_passes(root, root_required, holders)]

    def _note_disabled(self, group, trees):
        """Say so when disabled hosts are counted, which Nova never
        uses: it forbids their trait in every request."""
        if DISABLED_TRAIT in group.forbidden or not trees:
            return
        try:
            disabled = self.get_json(PROVIDERS_URL, required=DISABLED_TRAIT)
        except exceptions.ClientException:  # a server without the trait
            return
        counted = set().union(*trees.values())
        if any(p['uuid'] in counted for p in disabled['resource_providers']):
            self.app.stderr.write('Note: %s.\n' % DISABLED_NOTE)

    def _sharing_providers(self, trees):
        """root -> sharing providers outside the tree that serve it.

        A sharing provider serves every tree with a provider in one of its
        aggregates, as Placement's allocation candidates have it. The pairs
        are found whichever way sends fewer requests: from the sharing
        providers (each one's aggregates, then the providers in them), or,
        when the selected trees have fewer providers than the cloud has
        sharing providers (a filtered listing), from the trees (each
        provider's aggregates, then the sharing providers in those and
        their aggregates).
        """
        shares = self.get_json(PROVIDERS_URL,
                               required=provider_rules.SHARING_TRAIT)
        uuids = [p['uuid'] for p in shares['resource_providers']]
        if sum(len(tree) for tree in trees.values()) < len(uuids):
            pairs = self._pairs_from_trees(trees)
        else:
            pairs = self._pairs_from_sharing(uuids)
        sharing = {}
        for uuid, root in pairs:
            if root not in trees or uuid in trees[root]:
                continue
            served = sharing.setdefault(root, [])
            if uuid not in served:
                served.append(uuid)
        return sharing

    def _pairs_from_sharing(self, uuids):
        served = self._concurrently(self._roots_served, uuids,
                                    'Reading sharing providers')
        return [(uuid, root) for uuid, roots in zip(uuids, served)
                for root in sorted(roots)]

    def _roots_served(self, uuid):
        aggregates = self._aggregates_of(uuid)
        if not aggregates:
            return set()
        peers = self.get_json(PROVIDERS_URL,
                              **providers.in_aggregates(aggregates))
        return {p['root_provider_uuid'] for p in peers['resource_providers']}

    def _pairs_from_trees(self, trees):
        root_of = {p: root for root, tree in trees.items() for p in tree}
        members = list(root_of)
        aggregates = dict(zip(members, self._concurrently(
            self._aggregates_of, members, 'Reading aggregates')))
        nearby = set().union(*aggregates.values())
        if not nearby:
            return []
        shares = self.get_json(PROVIDERS_URL, **providers.in_aggregates(
            nearby, required=provider_rules.SHARING_TRAIT))
        near = [p['uuid'] for p in shares['resource_providers']]
        theirs = self._concurrently(self._aggregates_of, near,
                                    'Reading sharing providers')
        return [(uuid, root_of[member])
                for uuid, their in zip(near, theirs)
                for member in members if their & aggregates[member]]

    def _aggregates_of(self, uuid):
        return providers.aggregates_of(self.get_json, uuid)

    @staticmethod
    def _concurrently(func, items, label):
        # A line on a terminal: a cloud's sharing providers take seconds.
        return providers.results_or_raise(common.run_concurrently(
            func, items, progress=common.StderrProgress(label)))


# --- The request's filters ------------------------------------------------

def root_passes(root, root_required, holders):
    """Does provider ``root`` pass ``root_required`` (trait names, ``!``
    before a forbidden one), ``holders`` being each trait's providers?"""
    for name in root_required:
        forbidden = name.startswith('!')
        if (root in holders[name.lstrip('!')]) == forbidden:
            return False
    return True


def _has_filters(group):
    return bool(group.required or group.forbidden or group.member_of
                or group.forbidden_aggs or group.in_tree)


class RequestFilter:
    """Which providers may supply --fit's request, by explain.py's rules.

    A provider's traits and aggregates matter only for the names the
    request gives, so each name costs one provider list (the providers
    holding it) rather than a request per provider.
    """

    def __init__(self, command, group, everyone, sharing):
        self.group = group
        self.sharing = sharing
        traits = set().union(*group.required) | group.forbidden
        aggregates = set().union(*group.member_of) | group.forbidden_aggs
        holders = _holders(command, 'required', sorted(traits))
        members = _holders(command, 'member_of', sorted(aggregates))
        shares = {uuid for served in sharing.values() for uuid in served}
        self.known = {}
        for p in everyone:
            uuid = p['uuid']
            held = {name for name, uuids in holders.items() if uuid in uuids}
            if uuid in shares:
                held.add(provider_rules.SHARING_TRAIT)
            self.known[uuid] = explain.Provider(
                uuid, p['name'], p.get('parent_provider_uuid'),
                providers.root_of(p), traits=held,
                aggregates={name for name, uuids in members.items()
                            if uuid in uuids})
        self.in_tree_roots = {}
        if group.in_tree and group.in_tree in self.known:
            self.in_tree_roots[group.in_tree] = \
                self.known[group.in_tree].root

    def apply(self, trees, request):
        """``(trees, sharing, combos)``: each tree's providers and sharing
        providers that may supply the request, trees with none left out
        when aggregates or in_tree rule them out, and for trees whose
        required traits tie the classes together a function of the pools
        giving the choices a claim may make (see FitCounter)."""
        kept, serving, combos = {}, {}, {}
        for root, members in trees.items():
            shared = self.sharing.get(root, ())
            hood = self._hood(root, members, shared)
            if not any(explain.pair_ok(hood, self.group, self.known[uuid])
                       for uuid in members):
                continue
            usable = [uuid for uuid in list(members) + list(shared)
                      if explain.pair_ok(hood, self.group, self.known[uuid])
                      and not self.known[uuid].traits & self.group.forbidden]
            kept[root] = [uuid for uuid in usable if uuid in members]
            serving[root] = [uuid for uuid in usable if uuid not in members]
            if self.group.required:
                tie = self._tie(usable, list(request))
                if tie is not None:
                    combos[root] = tie
        return kept, serving, combos

    def _hood(self, root, members, shared):
        around = {uuid: self.known[uuid]
                  for uuid in list(members) + list(shared)
                  if uuid in self.known}
        return explain.Neighbourhood(root, around, around,
                                     self.in_tree_roots)

    def _tie(self, usable, classes):
        """None when every choice of one provider per class meets the
        required traits; else a function of the pools giving the choices
        that do (none: the tree takes no claim)."""
        group = self.group
        providers_ = [self.known[uuid] for uuid in usable]

        def choices(pools):
            takers = [[p for p in providers_ if rc in pools.get(p.uuid, {})]
                      for rc in classes]
            return [dict(zip(classes, (p.uuid for p in chosen)))
                    for chosen in itertools.product(*takers)
                    if explain._has_all(
                        frozenset().union(*(p.traits for p in chosen)),
                        group.required)]

        if all(explain._has_all(p.traits, group.required)
               for p in providers_):
            return None
        return choices


def _holders(command, key, names):
    """{name: uuids of the providers listed with ``key=name``}."""
    def listed(name):
        return {p['uuid'] for p in command.get_json(
            PROVIDERS_URL, **{key: name})['resource_providers']}
    found = providers.results_or_raise(
        common.run_concurrently(listed, names))
    return dict(zip(names, found))
