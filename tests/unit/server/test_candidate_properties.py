# SPDX-License-Identifier: Apache-2.0
"""Property tests: the search agrees with the brute-force oracle.

Random small clouds (trees, sharing providers, aggregates, traits,
inventories with constraints, existing usage) and random requests (parsed
by the real parser at a random microversion).

Aggregates are placed one at a time on a kind of provider (only a child,
only a root, only a sharing provider, a sharing provider and another
tree, ...), so that member_of requests meet the shapes their rules tell
apart: the unsuffixed group's member_of met by the anchor root, a sharing
provider serving another tree only if it is itself in the aggregates,
forbidden aggregates on the provider or the anchor root.

Required-trait clouds (``clouds(traits=True)``) place the custom traits
the same way: each on only the focus root, only a child of it, only a
sharing provider serving the focus tree, or only providers of other
trees; their requests (``request_pairs(traits=True)``) carry required
traits on groups with resources, so that SliceSpec.tree_traits, the
narrowing of trees they allow, meets those shapes.
"""

import collections
import random

import hypothesis
from hypothesis import strategies as st
import testtools

from osc_placement.server.candidates import request as cq
from osc_placement.server.candidates import search as cs
from osc_placement.server.candidates import snapshot as cn
from osc_placement.server import errors
from osc_placement.server.schemas import allocation_candidate as ac_schema
from osc_placement.server.schemas import request_groups as rg
from tests.unit.server import candidate_oracle
from tests.unit.server.test_candidate_examples import sent_body

SETTINGS = hypothesis.settings(
    max_examples=400, deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow,
                           hypothesis.HealthCheck.filter_too_much])

MEMBER_OF_SETTINGS = hypothesis.settings(SETTINGS, max_examples=300)

CLASSES = ['VCPU', 'DISK_GB', 'VGPU']
TRAITS = ['CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C']
AGGS = ['aaaaaaaa-0000-4000-8000-00000000000%d' % i for i in range(3)]
VERSIONS = [(1, 21), (1, 24), (1, 25), (1, 28), (1, 29), (1, 31), (1, 32),
            (1, 35), (1, 36), (1, 39)]


def rp_uuid(i):
    return '00000000-0000-4000-8000-%012d' % i


# Strategies are built once: building them inside draws dominates run time.
# Weights favour roomy inventories and few filters, so that answers are
# usually non-empty while the constraints still bite now and then.
INVENTORY = st.tuples(
    st.sampled_from([8, 5, 3, 1]),  # total
    st.sampled_from([0, 0, 0, 1]),  # reserved
    st.sampled_from([1, 1, 1, 1, 2]),  # min_unit
    st.sampled_from([8, 8, 3, 2, 1]),  # max_unit
    st.sampled_from([1, 1, 1, 1, 2]),  # step_size
    st.sampled_from([1.0, 1.0, 1.5, 0.5]))  # allocation_ratio
USED = st.sampled_from([0, 0, 1, 2])
# Where the filters are under test, inventories that rarely say no.
ROOMY_INVENTORY = st.sampled_from([(8, 0, 1, 8, 1, 1.0), (8, 0, 1, 8, 1, 1.0),
                                   (2, 0, 1, 2, 1, 1.0)])
ROOMY_USED = st.sampled_from([0, 0, 1])
PROVIDER_CLASSES = st.sets(st.sampled_from(CLASSES), min_size=1, max_size=3)
PROVIDER_TRAITS = st.sets(st.sampled_from(TRAITS), min_size=1, max_size=3)
# Where each aggregate's members are, a different kind for each (see
# aggregate_members), so that the kinds meet in one cloud.
AGG_PLACES = st.permutations(['root', 'link', 'child', 'sharing', 'any'])
PICK = st.integers(0, 6)  # an index into a list of at most 7 providers
MEMBER_COUNT = st.sampled_from([1, 1, 2])
ONE_IN_FOUR = st.integers(0, 3)
AMOUNT = st.sampled_from([1, 1, 2, 3])
TRAIT_NAMES = st.lists(st.sampled_from(TRAITS + [cn.SHARING_TRAIT]),
                       min_size=1, max_size=2, unique=True)
TRAIT_KIND = st.sampled_from(['plain', 'plain', 'forbidden', 'any'])
AGG_NAMES = st.lists(st.sampled_from(AGGS), min_size=1, max_size=2,
                     unique=True)
AGG_KIND = st.sampled_from(['', 'in:', '!', '!in:'])
# member_of requests: per group, how many positive values (repeated ones
# are ANDed), of which form, and whether a forbidden one comes too.
MEMBER_OF_COUNT = st.sampled_from([1, 0, 1, 2, 0, 1])
ANY_OF_KIND = st.sampled_from(['', 'in:'])
FORBID = st.booleans()
REQUIRED_COUNT = st.sampled_from([0] * 5 + [1, 1, 2])
ONE_IN = {n: st.integers(0, n - 1) for n in (2, 3, 5, 6, 8)}
SELDOM = st.sampled_from([False, False, False, False, True])
# Hypothesis favours the first elements: put the interesting ones there.
SUFFIXES = st.sampled_from([['', '1', '2'], ['1', '2'], ['', '1'], [''],
                            ['1']])
# member_of and required-trait requests: the unsuffixed group (whose
# member_of the anchor root may meet, whose required traits its providers
# meet together) and one suffixed group first.
MEMBER_OF_SUFFIXES = st.sampled_from([['', '1'], [''], ['', '1', '2'],
                                      ['1'], ['1', '2']])
POLICY = st.sampled_from(['none', 'isolate'])
ROOT_REQUIRED = st.sampled_from(['CUSTOM_A', '!CUSTOM_B',
                                 'CUSTOM_C,!CUSTOM_A'])
VERSION = st.sampled_from(VERSIONS)
# Where each custom trait is in required-trait clouds (see trait_holders),
# a different kind for each.
TRAIT_PLACES = st.permutations(['root', 'child', 'sharing', 'other'])
TRAIT = st.sampled_from(TRAITS)
AGG = st.sampled_from(AGGS)
# Required-trait requests: how many required values a group with
# resources carries (repeated ones are ANDed); a group without any still
# meets the others' tree_traits.
TRAITS_REQUIRED_COUNT = st.sampled_from([1, 1, 2, 0])
# Required-trait requests: suffixed groups from 1.25, forbidden traits
# from 1.22, in: lists at 1.39, resourceless groups from 1.36.
TRAITS_VERSION = st.sampled_from([(1, 39), (1, 25), (1, 36), (1, 39),
                                  (1, 22), (1, 29), (1, 39), (1, 32),
                                  (1, 35), (1, 21)])
# Requests with required traits and member_of: which of them a group
# carries.
GROUP_NARROWS = st.sampled_from(['traits', 'member_of', 'both'])
# Required-trait requests: any-of lists more often than elsewhere.
REQUIRED_KIND = st.sampled_from(['plain', 'any', 'forbidden', 'any',
                                 'plain'])
# member_of requests: forbidden aggregates (1.32) in about half of them.
MEMBER_OF_VERSION = st.sampled_from([(1, 39), (1, 32), (1, 29), (1, 25),
                                     (1, 36), (1, 24), (1, 39), (1, 28),
                                     (1, 21)])


@st.composite
def clouds(draw, roots_first=False, member_of=False, traits=False):
    """A random cloud; ``member_of`` makes inventories roomy, so that
    aggregates decide the answers; ``traits`` too, and places each custom
    trait on one kind of provider (see place_traits) instead of giving
    every provider some."""
    roomy = member_of or traits
    count = draw(st.integers(1, 7))
    parent, inventory, used, held = {}, {}, {}, {}
    for i in range(count):
        uuid = rp_uuid(i)
        # Listing parents first favours deep trees (hypothesis prefers
        # early elements); roots still come up. roots_first favours
        # several trees.
        earlier = [rp_uuid(j) for j in range(i)]
        parent[uuid] = draw(st.sampled_from(
            [None] + earlier if roots_first else earlier[::-1] + [None]))
        classes = draw(PROVIDER_CLASSES)
        inventory[uuid] = {
            rc: draw(ROOMY_INVENTORY if roomy else INVENTORY)
            for rc in classes}
        used[uuid] = {rc: draw(ROOMY_USED if roomy else USED)
                      for rc in classes}
        held[uuid] = set() if traits else set(draw(PROVIDER_TRAITS))
        if draw(ONE_IN_FOUR) == 0:
            held[uuid].add(cn.SHARING_TRAIT)
    cloud = candidate_oracle.Cloud(parent, inventory, used, held,
                                   {uuid: set() for uuid in parent})
    # The aggregates gather around one tree, often the largest (children
    # matter), else any.
    sizes = collections.Counter(cloud.root(u) for u in cloud.providers)
    roots = sorted(sizes, key=lambda root: (-sizes[root], root))
    focus = roots[0] if draw(ONE_IN[2]) else roots[draw(PICK) % len(roots)]
    # 'link' first: it may make a provider sharing, which 'sharing' then
    # finds.
    places = sorted(zip(AGGS, draw(AGG_PLACES)),
                    key=lambda pair: pair[1] != 'link')
    servers_only = None
    for agg, place in places:
        members = aggregate_members(draw, cloud, focus, place)
        for uuid in members:
            cloud.aggs[uuid].add(agg)
        if traits and place == 'sharing':
            # Serving the focus tree through another aggregate, the
            # sharing providers alone meet a member_of naming ``agg``
            # for it, while another server may hold a required trait.
            servers_only = agg
            for uuid in members:
                link_to_tree(draw, cloud, focus, uuid, avoid=agg)
    if traits:
        place_traits(draw, cloud, focus, servers_only)
    return cloud


def aggregate_members(draw, cloud, focus, place):
    """One or two providers of the kind ``place`` names, around the tree
    rooted at ``focus`` so that the shapes combine: its root, a child of
    it, a sharing provider of another tree, such a sharing provider and a
    provider of the tree ('link': the sharing provider then serves the
    tree; a provider of another tree is made sharing if none is). None if
    the cloud has no such provider."""
    def pick(pool):
        return pool[draw(PICK) % len(pool)] if pool else None

    providers = cloud.providers
    tree = [u for u in providers if cloud.root(u) == focus]
    sharing = [u for u in providers if cloud.is_sharing(u)]
    outside = [u for u in sharing if cloud.root(u) != focus]
    if place == 'link':
        server = pick(outside or [u for u in providers if u not in tree])
        if server is None:
            return set()
        cloud.traits[server].add(cn.SHARING_TRAIT)
        return {server, pick(tree)}
    if place == 'root':
        return {focus}
    pool = {'child': [u for u in tree if u != focus],
            'sharing': outside or sharing, 'any': providers}.get(place)
    return {u for u in (pick(pool) for _ in range(draw(MEMBER_COUNT))) if u}


def place_traits(draw, cloud, focus, servers_only=None):
    """Each custom trait on one kind of provider around the tree rooted
    at ``focus`` (see trait_holders), a different kind for each, so that
    a request naming two of them meets two kinds. After the aggregates:
    which trees a sharing provider serves is known by then.

    A holder gets room for every class: a trait on a provider without the
    class requested would decide nothing. ``servers_only``: the aggregate
    only sharing providers serving the focus tree are in, if any."""
    for name, place in zip(TRAITS, draw(TRAIT_PLACES)):
        for uuid in trait_holders(draw, cloud, focus, place, servers_only):
            cloud.traits[uuid].add(name)
            for rc in CLASSES:
                if rc not in cloud.inventory[uuid]:
                    cloud.inventory[uuid][rc] = draw(ROOMY_INVENTORY)


def trait_holders(draw, cloud, focus, place, servers_only=None):
    """One or two providers of the kind ``place`` names: the root
    ``focus``, a child of it, a sharing provider of another tree serving
    it ('sharing'), a provider of another tree ('other'). None if the
    cloud has no such provider."""
    if place == 'root':
        return {focus}
    if place == 'sharing':
        return serving_provider(draw, cloud, focus, servers_only)
    tree = {u for u in cloud.providers if cloud.root(u) == focus}
    pool = [u for u in cloud.providers
            if (u in tree) == (place == 'child') and u != focus]
    if not pool:
        return set()
    return {pool[draw(PICK) % len(pool)] for _ in range(draw(MEMBER_COUNT))}


def serving_provider(draw, cloud, focus, servers_only=None):
    """A sharing provider of another tree serving the tree rooted at
    ``focus``: one newly linked to the tree through an aggregate other
    than ``servers_only`` if a provider is left to link. The tree is then
    often served by two, and a request may need one for its member_of
    (naming ``servers_only``) and the other for its required trait."""
    servers = [u for u in cloud.providers
               if cloud.root(u) != focus and cloud.is_sharing(u)
               and focus in cloud.sharing_anchors(u)]
    others = [u for u in cloud.providers
              if cloud.root(u) != focus and u not in servers]
    if others:
        server = others[draw(PICK) % len(others)]
        link_to_tree(draw, cloud, focus, server, avoid=servers_only)
        return {server}
    return {servers[draw(PICK) % len(servers)]} if servers else set()


def link_to_tree(draw, cloud, focus, server, avoid=None):
    """Make ``server`` (of another tree) a sharing provider serving the
    tree rooted at ``focus``: it and a provider of the tree join an
    aggregate (not ``avoid``)."""
    if cloud.root(server) == focus:
        return
    tree = [u for u in cloud.providers if cloud.root(u) == focus]
    aggs = [a for a in AGGS if a != avoid]
    agg = aggs[draw(PICK) % len(aggs)]
    cloud.traits[server].add(cn.SHARING_TRAIT)
    cloud.aggs[server].add(agg)
    cloud.aggs[tree[draw(PICK) % len(tree)]].add(agg)


def snapshot_of(cloud, keep=None, anchors=None):
    """The cloud as a Snapshot; ``keep`` limits it to some providers."""
    keep = set(cloud.providers) if keep is None else keep
    providers = [(u, 'name-' + u, 0, cloud.parent[u], cloud.root(u))
                 for u in cloud.providers if u in keep]
    invs = [(u, rc) + tuple(inv) + (cloud.used_of(u, rc),)
            for u, per_rc in cloud.inventory.items() if u in keep
            for rc, inv in per_rc.items()]
    traits = [(u, t) for u, names in cloud.traits.items() if u in keep
              for t in names]
    aggs = [(u, a) for u, uuids in cloud.aggs.items() if u in keep
            for a in uuids]
    return cn.Snapshot.from_rows(providers, invs, traits, aggs, anchors)


def sql_slice(cloud, needs):
    """What the SQL layer reads for ``needs``, following the SliceSpec
    contract step by step against the whole cloud."""
    def has_room(u, rc, amount):
        inv = cloud.inventory[u].get(rc)
        return inv and cloud.used_of(u, rc) + amount <= (
            (inv[0] - inv[1]) * inv[5])

    seeds = {u for rc, amount in needs.min_amounts.items()
             for u in cloud.providers if has_room(u, rc, amount)}
    if needs.positive_filter_providers:
        seeds |= {u for u in cloud.providers
                  if cloud.traits[u] & needs.traits
                  or cloud.aggs[u] & needs.aggregates}
    anchor_rows = [(u, a) for u in sorted(seeds) if cloud.is_sharing(u)
                   for a in cloud.sharing_anchors(u)]
    roots = {cloud.root(u) for u in seeds} | {a for _, a in anchor_rows}
    # Step 6: of those, only trees with room for every class, in one of
    # their providers or in some sharing provider; the sharing seeds'
    # own trees stay (they come with the trees they serve).
    sharing = [u for u in cloud.providers if cloud.is_sharing(u)]

    def room_for_every_class(root):
        tree = [u for u in cloud.providers if cloud.root(u) == root]
        return all(any(has_room(u, rc, amount) for u in tree + sharing)
                   for rc, amount in needs.min_amounts.items())
    roots = ({r for r in roots if room_for_every_class(r)}
             | {cloud.root(u) for u in seeds if cloud.is_sharing(u)})
    in_tree = {cloud.root(u) for u in needs.in_tree if u in cloud.parent}
    narrowings = [(wanted, held) for wanted, held in (
        (needs.tree_aggregates, cloud.aggs), (needs.tree_traits, cloud.traits))
        if wanted is not None]
    for wanted, held in narrowings:
        # Step 5, as narrow as the contract allows: only trees with a
        # provider holding one of tree_aggregates (tree_traits likewise),
        # or served by a sharing seed holding one -- each narrowing met
        # on its own, perhaps by different providers.
        roots &= ({cloud.root(u) for u in cloud.providers
                   if held[u] & wanted}
                  | {a for u, a in anchor_rows if held[u] & wanted})
    if narrowings:
        # Plus the trees of the sharing seeds serving those.
        anchor_rows = [(u, a) for u, a in anchor_rows
                       if a in roots | in_tree]
        roots |= {cloud.root(u) for u, _ in anchor_rows}
    roots |= in_tree
    keep = {u for u in cloud.providers if cloud.root(u) in roots}
    return snapshot_of(cloud, keep, anchor_rows)


# Values are drawn only in forms the version accepts, so that few examples
# are rejected by the parser.


def trait_value(draw, version, kinds=TRAIT_KIND):
    kind, names = draw(kinds), draw(TRAIT_NAMES)
    if kind == 'any' and version >= (1, 39):
        return 'in:' + ','.join(names)
    if kind == 'forbidden' and version >= (1, 22):
        return ','.join(names[:-1] + ['!' + names[-1]])
    return ','.join(names)


def member_of_value(draw, version, cloud=None, forbidden=False,
                    avoid=()):
    """A member_of value. With ``cloud``, one naming aggregates the cloud
    has members in (other than ``avoid`` if it can), forbidden or not as
    told."""
    if cloud is None:
        prefix, names = draw(AGG_KIND), draw(AGG_NAMES)
    else:
        used = sorted(set().union(*cloud.aggs.values()))
        names = [a for a in used if a not in avoid] or used or AGGS
        prefix = ('!' if forbidden else '') + draw(ANY_OF_KIND)
        names = draw(st.lists(st.sampled_from(names), min_size=1,
                              max_size=2, unique=True))
    if version < (1, 32):
        prefix = prefix.lstrip('!')
    if prefix in ('', '!'):
        names = names[:1]
    return prefix + ','.join(names)


def sometimes(draw, n, member_of):
    """About one time in ``n``; seldom in member_of requests, so that
    aggregates decide their answers."""
    return draw(SELDOM) if member_of else draw(ONE_IN[n]) == 0


def group_pairs(draw, version, suffix, cloud, resourceless_ok,
                member_of=False, traits=False):
    """One group's pairs; with ``traits``, a group with resources carries
    required traits (most often), and member_of comes only with
    ``member_of``. With both, a group often has only one of them, so
    that different providers may meet the two narrowings."""
    narrows = draw(GROUP_NARROWS) if traits and member_of else 'both'
    pairs = []
    if resourceless_ok and (draw(ONE_IN[2]) == 0 if traits
                            else sometimes(draw, 2, member_of)):
        # A resourceless group needs a positive filter to match anything
        # (a member_of one, perhaps, drawn below).
        if not member_of or draw(ONE_IN[2]) == 0:
            pairs.append(('required' + suffix,
                          draw(st.sampled_from(TRAITS))))
    else:
        # Ask for classes the cloud has, so that answers are often found.
        offered = sorted({rc for inv in cloud.inventory.values()
                          for rc in inv})
        classes = draw(st.lists(st.sampled_from(offered), min_size=1,
                                max_size=2, unique=True))
        amounts = ['%s:%d' % (rc, draw(AMOUNT)) for rc in classes]
        pairs.append(('resources' + suffix, ','.join(amounts)))
    with_resources = traits and any(key.startswith('resources')
                                    for key, _ in pairs)
    for _ in range(draw(TRAITS_REQUIRED_COUNT if with_resources
                        else REQUIRED_COUNT) if narrows != 'member_of'
                   else 0):
        pairs.append(('required' + suffix, trait_value(
            draw, version, REQUIRED_KIND if traits else TRAIT_KIND)))
    if member_of and (narrows != 'traits' or not pairs):
        pairs += member_of_pairs(draw, version, suffix, cloud,
                                 resourceless=not pairs)
    elif not traits and draw(ONE_IN[6]) == 0:
        pairs.append(('member_of' + suffix, member_of_value(draw, version)))
    if version >= (1, 31) and sometimes(draw, 8, member_of or traits):
        pairs.append(('in_tree' + suffix,
                      draw(st.sampled_from(cloud.providers))))
    return pairs


def member_of_pairs(draw, version, suffix, cloud, resourceless):
    """A member_of request's member_of values for one group: none, one or
    two positive ones (two need 1.24), perhaps a forbidden one (1.32)."""
    count = draw(MEMBER_OF_COUNT)
    if resourceless:
        count = max(count, 1)  # the group's only (positive) filter
    if version < (1, 24):
        count = min(count, 1)
    values = [member_of_value(draw, version, cloud) for _ in range(count)]
    if version >= (1, 32) and draw(FORBID):
        # Forbidding an aggregate the group asks for matches nothing.
        named = {agg for value in values
                 for agg in value.replace('in:', '').split(',')}
        values.append(member_of_value(draw, version, cloud, forbidden=True,
                                      avoid=named))
    return [('member_of' + suffix, value) for value in values]


@st.composite
def request_pairs(draw, cloud, member_of=False, traits=False):
    """(version, query pairs) of a random request, as a client sends it;
    with ``member_of``, some group has a member_of (often several); with
    ``traits``, some group with resources requires a trait (often
    several do) -- both narrow the trees SQL reads."""
    version = draw(TRAITS_VERSION if traits
                   else MEMBER_OF_VERSION if member_of else VERSION)
    suffixes = ['']
    if version >= (1, 25):
        suffixes = draw(MEMBER_OF_SUFFIXES if member_of or traits
                        else SUFFIXES)
    subtree = []
    if version >= (1, 36) and len(suffixes) > 1 and (
            draw(ONE_IN[3]) == 0 if traits
            else sometimes(draw, 2, member_of)):
        subtree = [s for s in suffixes if s]
    pairs = []
    for suffix in suffixes:
        pairs += group_pairs(draw, version, suffix, cloud,
                             resourceless_ok=suffix in subtree,
                             member_of=member_of, traits=traits)
    if member_of and not any(key.startswith('member_of')
                             for key, _ in pairs):
        suffix = draw(st.sampled_from(suffixes))
        pairs.append(('member_of' + suffix,
                      member_of_value(draw, version, cloud)))
    if traits:
        pairs += required_trait_if_none(draw, pairs)
    if subtree:
        pairs.append(('same_subtree', ','.join(subtree)))
    if len([s for s in suffixes if s]) > 1 or (version >= (1, 25)
                                               and draw(ONE_IN[2]) == 0):
        pairs.append(('group_policy', draw(POLICY)))
    if version >= (1, 35) and sometimes(draw, 5, member_of or traits):
        pairs.append(('root_required', draw(ROOT_REQUIRED)))
    return version, pairs


def required_trait_if_none(draw, pairs):
    """A required trait for a group with resources if none of them names
    one (only forbidden ones, say): what gives a request tree_traits."""
    with_resources = [key[len('resources'):] for key, _ in pairs
                      if key.startswith('resources')]
    named = {key[len('required'):] for key, value in pairs
             if key.startswith('required') and names_required_trait(value)}
    if not with_resources or named & set(with_resources):
        return []
    suffix = with_resources[draw(PICK) % len(with_resources)]
    return [('required' + suffix, draw(TRAIT))]


def names_required_trait(value):
    """Whether a ``required`` value requires a trait (not only forbids)."""
    return value.startswith('in:') or any(
        not name.startswith('!') for name in value.split(','))


@st.composite
def requests(draw, cloud, member_of=False, traits=False):
    version, pairs = draw(request_pairs(cloud, member_of, traits))
    try:
        ac_schema.check_query(pairs, version)
        return rg.parse_candidate_request(pairs, version)
    except errors.BadRequest:
        hypothesis.reject()


@st.composite
def combining_requests(draw, cloud):
    """Two or three filter-free groups: exercises how groups combine
    (summed amounts, isolate, same_subtree, one tree per candidate)."""
    version = draw(st.sampled_from([(1, 36), (1, 29), (1, 28)]))
    offered = sorted({rc for inv in cloud.inventory.values() for rc in inv})
    suffixes = draw(st.sampled_from([['', '1', '2'], ['1', '2'], ['', '1'],
                                     ['1', '2', '3']]))
    pairs = [('resources' + suffix, '%s:%d' % (draw(st.sampled_from(offered)),
                                               draw(AMOUNT)))
             for suffix in suffixes]
    pairs.append(('group_policy', draw(POLICY)))
    named = [s for s in suffixes if s]
    if version >= (1, 36) and len(named) > 1 and draw(ONE_IN[2]) == 0:
        pairs.append(('same_subtree', ','.join(named[:2])))
    return rg.parse_candidate_request(pairs, version)


@st.composite
def cloud_and_combining_request(draw):
    cloud = draw(clouds())
    return cloud, draw(combining_requests(cloud))


@st.composite
def cloud_and_request(draw):
    cloud = draw(clouds())
    return cloud, draw(requests(cloud))


@st.composite
def cloud_and_member_of_request(draw):
    """A cloud (deep trees or several trees) and a request with
    member_of."""
    cloud = draw(clouds(roots_first=draw(st.booleans()), member_of=True))
    return cloud, draw(requests(cloud, member_of=True))


@st.composite
def cloud_and_traits_request(draw):
    """A cloud (deep trees or several trees) whose custom traits are
    placed by kind and a request requiring some (with member_of now and
    then)."""
    cloud = draw(clouds(roots_first=draw(st.booleans()), traits=True))
    return cloud, draw(requests(cloud, member_of=draw(SELDOM), traits=True))


def tree_meets(cloud, anchor, aggregates, held=None):
    """SliceSpec.tree_aggregates' test of an anchor tree: a provider of it,
    or a sharing provider serving it, is in one of ``aggregates``; with
    ``held`` (cloud.traits, say) that test for other names."""
    held = cloud.aggs if held is None else held
    return any(held[u] & aggregates for u in cloud.providers
               if cloud.root(u) == anchor or (
                   cloud.is_sharing(u) and anchor in cloud.sharing_anchors(u)))


def keys_of(result):
    return {(frozenset((u, rc, n) for u, resources in c.allocations
                       for rc, n in resources),
             frozenset((s, frozenset(ps)) for s, ps in c.mappings))
            for c in result.candidates}


def summaries_for(snap, request, candidates):
    used = {u for c in candidates for u in c.resource_providers()}
    if request.version < (1, 29):
        return used
    roots = {snap.root(u) for u in used}
    return {u for u in snap.providers if snap.root(u) in roots}


ONE_BY_ONE = st.sampled_from([0, 1, 32])


class TestSearchMatchesOracle(testtools.TestCase):

    @SETTINGS
    @hypothesis.given(cloud_and_request(), ONE_BY_ONE)
    def test_full_answer_equals_oracle(self, case, one_by_one):
        """``one_by_one``: after how many anchors a spread search stops
        testing providers one by one and works out each class's takers
        (either way, and the switch between them, must agree)."""
        self.patch(cs, '_ONE_BY_ONE_ANCHORS', one_by_one)
        cloud, request = case
        expected, expected_summaries = candidate_oracle.oracle(cloud, request)
        result = cs.search(snapshot_of(cloud), request)
        self.assertEqual(len(result.candidates), len(keys_of(result)),
                         'duplicate candidates returned')
        self.assertEqual(expected, keys_of(result))
        self.assertEqual(expected_summaries, result.summary_providers)

    @SETTINGS
    @hypothesis.given(cloud_and_combining_request(), ONE_BY_ONE)
    def test_group_combinations_equal_oracle(self, case, one_by_one):
        self.test_full_answer_equals_oracle.hypothesis.inner_test(
            self, case, one_by_one)

    @SETTINGS
    @hypothesis.given(cloud_and_request(), st.integers(1, 5),
                      st.sampled_from([cq.DEPTH_FIRST, cq.BREADTH_FIRST]),
                      st.booleans(), st.integers(0, 2 ** 16))
    def test_limited_answer_is_right_sized_subset(self, case, limit,
                                                  strategy, randomize, seed):
        cloud, request = case
        expected, _ = candidate_oracle.oracle(cloud, request)
        request = rg.dataclasses.replace(request, limit=limit)
        snap = snapshot_of(cloud)
        options = cq.SearchOptions(strategy=strategy, randomize=randomize,
                                   rng=random.Random(seed))
        result = cs.search(snap, request, options)
        got = keys_of(result)
        self.assertEqual(min(limit, len(expected)), len(result.candidates))
        self.assertEqual(len(result.candidates), len(got))
        self.assertTrue(got <= expected)
        self.assertEqual(summaries_for(snap, request, result.candidates),
                         result.summary_providers)

    @SETTINGS
    @hypothesis.given(cloud_and_request(), st.integers(-1, 4))
    def test_max_candidates_caps_generation(self, case, cap):
        cloud, request = case
        expected, _ = candidate_oracle.oracle(cloud, request)
        options = cq.SearchOptions(max_candidates=cap,
                                   strategy=cq.BREADTH_FIRST)
        result = cs.search(snapshot_of(cloud), request, options)
        wanted = len(expected) if cap < 0 else min(max(cap, 1),
                                                   len(expected))
        self.assertEqual(wanted, len(result.candidates))
        self.assertTrue(keys_of(result) <= expected)

    @SETTINGS
    @hypothesis.given(cloud_and_request())
    def test_slice_gives_the_same_answer(self, case):
        cloud, request = case
        full = cs.search(snapshot_of(cloud), request)
        part = cs.search(sql_slice(cloud, cq.snapshot_needs(request)),
                         request)
        self.assertEqual(keys_of(full), keys_of(part))
        self.assertEqual(full.summary_providers, part.summary_providers)

    @MEMBER_OF_SETTINGS
    @hypothesis.given(cloud_and_member_of_request(), ONE_BY_ONE)
    def test_member_of_answer_equals_oracle(self, case, one_by_one):
        """member_of in every request: the answer is the oracle's, every
        anchor tree of the oracle's candidates meets SliceSpec's
        tree_aggregates and the slice narrowed by them gives the answer
        too."""
        self.test_full_answer_equals_oracle.hypothesis.inner_test(
            self, case, one_by_one)
        cloud, request = case
        wanted = cq.snapshot_needs(request).tree_aggregates
        if wanted is not None:
            for anchor, keys in candidate_oracle.oracle_by_anchor(
                    cloud, request).items():
                if keys:
                    self.assertTrue(tree_meets(cloud, anchor, wanted),
                                    'anchor %s outside %s' % (anchor,
                                                              wanted))
        self.test_slice_gives_the_same_answer.hypothesis.inner_test(self,
                                                                    case)

    @MEMBER_OF_SETTINGS
    @hypothesis.given(cloud_and_traits_request(), ONE_BY_ONE)
    def test_required_traits_answer_equals_oracle(self, case, one_by_one):
        """Required traits in every request: the answer is the oracle's,
        every anchor tree of the oracle's candidates meets SliceSpec's
        tree_traits (and tree_aggregates, with member_of) and the slice
        narrowed by them gives the answer too."""
        self.test_full_answer_equals_oracle.hypothesis.inner_test(
            self, case, one_by_one)
        cloud, request = case
        needs = cq.snapshot_needs(request)
        narrowings = [(wanted, held) for wanted, held in (
            (needs.tree_traits, cloud.traits),
            (needs.tree_aggregates, cloud.aggs)) if wanted is not None]
        for anchor, keys in candidate_oracle.oracle_by_anchor(
                cloud, request).items():
            for wanted, held in narrowings if keys else ():
                self.assertTrue(tree_meets(cloud, anchor, wanted, held),
                                'anchor %s outside %s' % (anchor, wanted))
        self.test_slice_gives_the_same_answer.hypothesis.inner_test(self,
                                                                    case)

    @SETTINGS
    @hypothesis.given(clouds())
    def test_anchors_match_definition(self, cloud):
        snap = snapshot_of(cloud)
        for uuid in cloud.providers:
            if cloud.is_sharing(uuid):
                self.assertEqual(cloud.sharing_anchors(uuid),
                                 set(snap.anchors[uuid]))

    @hypothesis.settings(SETTINGS, max_examples=100)
    @hypothesis.given(cloud_and_request())
    def test_body_reflects_result(self, case):
        cloud, request = case
        snap = snapshot_of(cloud)
        result = cs.search(snap, request)
        body = sent_body(result, request, snap)
        self.assertEqual(len(result.candidates),
                         len(body['allocation_requests']))
        self.assertEqual(result.summary_providers,
                         set(body['provider_summaries']))
        for shown, cand in zip(body['allocation_requests'],
                               result.candidates):
            self.assertEqual(cand.allocation_dict(),
                             allocations_of(shown, request.version))
            self.assertEqual(request.version >= (1, 34), 'mappings' in shown)
        requested = request.resource_class_names()
        for uuid, summary in body['provider_summaries'].items():
            classes = set(cloud.inventory[uuid])
            if request.version < (1, 27):
                classes &= requested
            self.assertEqual(classes, set(summary['resources']))


def allocations_of(shown, version):
    if version < (1, 12):
        return {item['resource_provider']['uuid']: item['resources']
                for item in shown['allocations']}
    return {uuid: item['resources']
            for uuid, item in shown['allocations'].items()}


def forests():
    """Like clouds(), but favouring several trees: roots come first in
    the parent choice."""
    return clouds(roots_first=True)
