# SPDX-License-Identifier: Apache-2.0
"""Allocations: read per consumer or provider, and the replacing write.

A write (PUT, POST, the reshaper) replaces the whole allocation set of
every consumer it names, in the caller's transaction, as a fixed handful
of statements whatever its size: lock the named providers' rows so
writers of one provider queue rather than race; read the consumers and
every involved provider's generation, inventory and usage; check in
Python; compare-and-swap every provider's generation in one UPDATE (a
lost swap raises ``Retry``, so a stale capacity check is never
committed); then write the rows.
"""

import collections
import dataclasses
import functools
import logging

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import lists
from osc_placement.server.db import pipeline
from osc_placement.server.db import tables
from osc_placement.server import errors
from osc_placement.server.objects import consumer as consumer_obj
from osc_placement.server.objects import inventory
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import resource_provider as rp_obj

LOG = logging.getLogger(__name__)
_ALLOC = tables.allocations
_USAGE = tables.usage_totals
_RP = tables.resource_providers
_INV = tables.inventories
_C = tables.consumers

CONCURRENT = ('Inventory and/or allocations changed while attempting to '
              'allocate: Another thread concurrently updated the resource '
              'provider data. Please retry your update')


@dataclasses.dataclass
class ConsumerWrite:
    """The complete new allocation set of one consumer.

    ``allocations`` is {provider uuid: {class name: amount}}; empty means
    "remove them all". ``generation`` is the client's consumer generation
    (None = must be new) or consumer.UNCHECKED before 1.28.
    ``consumer_type`` None keeps the current type (writes before 1.38).
    """

    uuid: str
    project_id: str
    user_id: str
    allocations: dict
    generation: object = consumer_obj.UNCHECKED
    consumer_type: str = None


@dataclasses.dataclass
class Messages:
    """Per-route wording of the 400s raised while writing."""

    # Filled in once with ``name`` and ``fields`` (see require_ids).
    unknown_class: str = 'No such resource class %(name)s.'
    fields: dict = dataclasses.field(default_factory=dict)


# -- reads ---------------------------------------------------------------

def _latest(rows):
    times = [r['updated_at'] or r['created_at'] for r in rows]
    return max(times) if times else None


@functools.lru_cache(maxsize=None)
def _for_consumer_statement():
    """A consumer's allocations, each row with the consumer as the API
    shows it (None columns where there is no such consumer)."""
    return (
        sa.select(_RP.c.uuid, _RP.c.generation, _ALLOC.c.resource_class_id,
                  _ALLOC.c.used, _ALLOC.c.created_at, _ALLOC.c.updated_at,
                  *consumer_obj.SHOWN_COLUMNS)
        .select_from(consumer_obj.join_shown(
            _ALLOC.join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id),
            _ALLOC.c.consumer_id))
        .where(_ALLOC.c.consumer_id == sa.bindparam('uuid'))
        .order_by(_ALLOC.c.id))


def for_consumer(conn, uuid):
    """({provider uuid: {'generation', 'resources'}}, latest change, the
    consumer as consumer.shown_from gives it, None without allocations).

    One statement, so one state even where each statement of a read sees
    its own (PostgreSQL): read apart, a writer committing in between gave
    allocations without their consumer's generation, or old allocations
    with the new generation, which a client's read-modify-write would
    then send back unseen."""
    rows = conn.execute(_for_consumer_statement(),
                        {'uuid': uuid}).mappings().all()
    names = resource_class.names_for(
        conn, {r['resource_class_id'] for r in rows})
    result = {}
    for row in rows:
        entry = result.setdefault(row['uuid'], {
            'resources': {}, 'generation': row['generation']})
        entry['resources'][names[row['resource_class_id']]] = row['used']
    consumer = consumer_obj.shown_from(rows[0]) if rows else None
    return result, _latest(rows), consumer


@functools.lru_cache(maxsize=None)
def _for_provider_statement():
    return rp_obj.select_with_provider(
        (_ALLOC.c.consumer_id, _ALLOC.c.resource_class_id, _ALLOC.c.used,
         _ALLOC.c.created_at, _ALLOC.c.updated_at,
         _C.c.generation.label('consumer_generation')),
        ((_ALLOC, _ALLOC.c.resource_provider_id == _RP.c.id),
         (_C, _C.c.uuid == _ALLOC.c.consumer_id)),
        order_by=(_ALLOC.c.id,))


def for_provider(conn, uuid, template):
    """(provider generation, {consumer uuid: {'resources',
    'consumer_generation'}}, latest change); 404 with ``template`` if
    there is no such provider."""
    generation, rows = rp_obj.read_with_provider(
        conn, _for_provider_statement(), uuid, 'consumer_id', template)
    names = resource_class.names_for(
        conn, {r['resource_class_id'] for r in rows})
    result = {}
    for row in rows:
        entry = result.setdefault(row['consumer_id'], {
            'resources': {},
            'consumer_generation': row['consumer_generation']})
        entry['resources'][names[row['resource_class_id']]] = row['used']
    return generation, result, _latest(rows)


# -- the write -------------------------------------------------------------

def write_or_409(db, fn, *args, conflict=CONCURRENT):
    """Run an allocation write, ``fn(conn, *args)`` (:func:`replace`, the
    reshaper), in one transaction, re-read and re-applied while other
    writers keep winning the provider generation race; 409 ``conflict``
    once retries run out, logged as upstream logs it for operators."""
    try:
        return db.run_write(fn, *args)
    except db_engine.CommitOutcomeUnknown as exc:
        # For the line that tells operators which consumers to look at.
        exc.consumers = _consumers_written(args)
        raise
    except db_engine.Retry:
        pass
    except sa.exc.DBAPIError as exc:
        # Its last run lost to a deadlock rather than a generation race:
        # the same conflict.
        if not db_engine.is_retryable(exc):
            raise
    LOG.warning('Exceeded retry limit of %d on allocations write',
                db.write_retries)
    raise errors.Conflict(conflict, code=errors.CONCURRENT_UPDATE)


def _consumers_written(args):
    """The uuids of the ConsumerWrites among a write's arguments."""
    return [write.uuid for arg in args if isinstance(arg, list)
            for write in arg if isinstance(write, ConsumerWrite)]


# The write's fixed statements, built once per database kind (building
# them per request cost more Python time than the database took to run
# them); the lists of uuids are given at execution (see db/lists.py).
@functools.lru_cache(maxsize=None)
def _load_providers_statement(dialect):
    usage = sa.and_(_USAGE.c.resource_provider_id == _RP.c.id,
                    _USAGE.c.resource_class_id == _INV.c.resource_class_id)
    return (
        sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation,
                  _INV.c.resource_class_id, _INV.c.total, _INV.c.reserved,
                  _INV.c.min_unit, _INV.c.max_unit, _INV.c.step_size,
                  _INV.c.allocation_ratio,
                  sa.func.coalesce(_USAGE.c.used, 0).label('used'))
        .select_from(
            _RP.outerjoin(_INV, _INV.c.resource_provider_id == _RP.c.id)
            .outerjoin(_USAGE, usage))
        .where(lists.one_of_param(dialect, _RP.c.uuid, 'uuids')))


def _ids_of(dialect, uuids_param):
    return (sa.select(_RP.c.id)
            .where(lists.one_of_param(dialect, _RP.c.uuid, uuids_param)))


@functools.lru_cache(maxsize=None)
def _lock_usage_statement(dialect):
    """The usage rows of the providers named by uuid (``lock_uuids``),
    in key order. Only usage_totals is read, by its key's prefix, so
    nothing else is locked (MariaDB has no FOR UPDATE OF: a join would
    lock the providers' rows as well, in between)."""
    return (sa.select(_USAGE.c.resource_provider_id)
            .where(_USAGE.c.resource_provider_id.in_(
                _ids_of(dialect, 'lock_uuids')))
            .order_by(_USAGE.c.resource_provider_id,
                      _USAGE.c.resource_class_id)
            .with_for_update())


@functools.lru_cache(maxsize=None)
def _lock_providers_statement(dialect):
    return (sa.select(_RP.c.id)
            .where(lists.one_of_param(dialect, _RP.c.uuid, 'uuids'))
            .order_by(_RP.c.id).with_for_update())


def _lock_usage_then_providers(dialect, only_if=None):
    """Both locks in one round trip (PostgreSQL): the usage rows'
    locking subquery is an uncorrelated condition, which PostgreSQL
    evaluates once before it scans (and locks) a provider row. With
    ``only_if``, an uncorrelated condition too, nothing is locked unless
    it holds."""
    usage, providers = (_lock_usage_statement(dialect),
                        _lock_providers_statement(dialect))
    if only_if is not None:
        usage, providers = usage.where(only_if), providers.where(only_if)
    taken = sa.select(sa.func.count()).select_from(usage.subquery())
    return providers.where(taken.scalar_subquery() >= 0)


@functools.lru_cache(maxsize=None)
def _lock_usage_then_providers_statement(dialect):
    return _lock_usage_then_providers(dialect)


# The columns of _load_providers_statement from the inventory's class
# on, as each inventory record names them.
_INVENTORY_FIELDS = ('resource_class_id', 'total', 'reserved', 'min_unit',
                     'max_unit', 'step_size', 'allocation_ratio', 'used')


def _load_providers(conn, uuids):
    """{uuid: {'id', 'uuid', 'generation', 'inventory': {class id: inv}}}
    where each inv carries the six fields plus 'used' (all consumers,
    from usage_totals, which triggers keep with the allocations)."""
    return _providers_from(conn.execute(
        _load_providers_statement(conn.dialect.name),
        {'uuids': sorted(uuids)}))


def _providers_from(rows):
    """_load_providers' answer from its statement's rows."""
    providers = {}
    for row in rows:
        provider_id, uuid, generation, class_id = row[:4]
        provider = providers.get(uuid)
        if provider is None:
            provider = providers[uuid] = {
                'id': provider_id, 'uuid': uuid, 'generation': generation,
                'inventory': {}}
        if class_id is not None:
            provider['inventory'][class_id] = dict(
                zip(_INVENTORY_FIELDS, row[3:]))
    return providers


def _named_providers(writes):
    """Provider uuids in body order (for the first-unknown message)."""
    seen = {}
    for write in writes:
        for uuid in write.allocations:
            seen.setdefault(uuid, None)
    return list(seen)


def _check_providers_exist(named, providers):
    for uuid in named:
        if uuid not in providers:
            raise errors.BadRequest(
                "Allocation for resource provider '%s' that does not "
                "exist." % uuid)


def _class_names(writes):
    """The class names the writes allocate, first use first."""
    names = []
    for write in writes:
        for resources in write.allocations.values():
            names.extend(n for n in resources if n not in names)
    return names


def _class_ids(conn, writes, messages):
    return resource_class.require_ids(conn, _class_names(writes),
                                      messages.unknown_class,
                                      messages.fields)


def _requested(writes, providers, class_ids):
    """{(provider id, class id): summed amount} over every consumer, and
    the ordered (provider uuid, class name) pairs for error messages."""
    sums, order = collections.Counter(), {}
    for write in writes:
        for uuid, resources in write.allocations.items():
            for name, amount in resources.items():
                key = (providers[uuid]['id'], class_ids[name])
                sums[key] += amount
                order.setdefault(key, (uuid, name, amount))
    return sums, order


def _unable(text):
    return errors.Conflict('Unable to allocate inventory: ' + text)


def _check_record(inv, uuid, name, amount):
    if inv is None:
        raise _unable("Inventory for '%s' on resource provider '%s' "
                      "invalid." % (name, uuid))
    if (amount < inv['min_unit'] or amount > inv['max_unit']
            or amount % inv['step_size']):
        raise _unable("Unable to create allocation for '%s' on resource "
                      "provider '%s'. The requested amount would violate "
                      "inventory constraints." % (name, uuid))


def _check_capacity(sums, order, providers_by_id, mine):
    """Every requested (provider, class) fits, or at least does not make
    an existing over-commit worse. ``mine`` is the current usage of the
    consumers being rewritten, which the write replaces."""
    for key, (uuid, name, amount) in order.items():
        provider_id, class_id = key
        inv = providers_by_id[provider_id]['inventory'].get(class_id)
        _check_record(inv, uuid, name, amount)
        others = inv['used'] - mine[key]
        after = others + sums[key]
        if after > inventory.capacity(inv) and after > inv['used']:
            raise _unable("Unable to create allocation for '%s' on resource "
                          "provider '%s'. The requested amount would exceed "
                          "the capacity." % (name, uuid))


def _queue_for_providers(conn, uuids, held):
    """Lock the named providers' rows before reading anything, so that
    writers of one provider take turns rather than all but one losing
    the compare-and-swap (which still guards correctness on its own).

    Usage rows first, in key order: the named providers' and ``held``'s
    (those the consumers hold allocations on now). Every writer of
    allocations, upstream's too (its triggers lock them), takes them
    before the provider rows, so writers never wait in opposite orders.
    A consumer whose allocations change after ``held`` was read fails
    its generation's swap, and the write runs again."""
    dialect = conn.dialect.name
    if dialect == 'sqlite' or not (uuids or held):
        return
    params = {'uuids': sorted(uuids),
              'lock_uuids': sorted(set(uuids) | set(held))}
    if dialect == 'postgresql':
        conn.execute(_lock_usage_then_providers_statement(dialect), params)
        return
    conn.execute(_lock_usage_statement(dialect), params)
    conn.execute(_lock_providers_statement(dialect), params)


def _bump_providers(conn, providers):
    """+1 on each provider, but only if none changed since it was read."""
    if not providers:
        return
    ordered = sorted(providers, key=lambda p: p['id'])
    result = conn.execute(
        _RP.update()
        .where(sa.or_(*[sa.and_(_RP.c.id == p['id'],
                                _RP.c.generation == p['generation'])
                        for p in ordered]))
        .values(generation=_RP.c.generation + 1,
                updated_at=tables.utcnow()))
    if result.rowcount != len(ordered):
        raise db_engine.Retry()


def _wanted_ids(writes):
    """The project, user and type names the writes refer to, by kind."""
    return {'project': {w.project_id for w in writes},
            'user': {w.user_id for w in writes},
            'type': {w.consumer_type for w in writes
                     if w.consumer_type is not None}}


def _identity_ids(conn, writes):
    return consumer_obj.ensure_ids(conn, _wanted_ids(writes))


def _save_consumers(conn, writes, existing, allocated, ids):
    """Create new consumers, bump kept ones, delete emptied ones.

    As upstream, whose write touches only the consumers its allocation
    records name: a new consumer written with no allocations is kept
    with no allocations at generation 0 (a later write must send
    ``consumer_generation: 0``), and such a consumer written empty again
    is left as it is. ``allocated``: the uuids that had allocations."""
    projects, users, types = ids['project'], ids['user'], ids['type']
    new_rows = []
    for write in writes:
        current = existing.get(write.uuid)
        type_id = (types[write.consumer_type]
                   if write.consumer_type is not None
                   else current and current['consumer_type_id'])
        if current is None:
            new_rows.append({'uuid': write.uuid,
                             'project_id': projects[write.project_id],
                             'user_id': users[write.user_id],
                             'consumer_type_id': type_id,
                             'generation': 1 if write.allocations else 0})
        elif write.allocations:
            consumer_obj.bump(conn, current, projects[write.project_id],
                              users[write.user_id], type_id)
        elif write.uuid in allocated:
            consumer_obj.delete(conn, current)
    consumer_obj.create_many(conn, new_rows)


def _replace_rows(conn, writes, class_ids, providers, existing):
    # Allocation rows exist only with their consumer's row (both are
    # written, and removed, together here and in DELETE /allocations), so
    # a new consumer has none to delete: a scheduler's claim saves the
    # round trip.
    known = sorted({w.uuid for w in writes if w.uuid in existing})
    if known:
        conn.execute(_ALLOC.delete().where(
            lists.one_of(conn, _ALLOC.c.consumer_id, known)))
    now = tables.utcnow()
    rows = [{'consumer_id': w.uuid,
             'resource_provider_id': providers[uuid]['id'],
             'resource_class_id': class_ids[name], 'used': amount,
             'created_at': now}
            for w in writes for uuid, resources in w.allocations.items()
            for name, amount in resources.items()]
    if rows:
        conn.execute(_ALLOC.insert(), rows)


def _read_consumers(conn, writes):
    """The ids of the writes' projects, users and types, and the named
    consumers with their current allocations."""
    ids = _identity_ids(conn, writes)
    existing, current = consumer_obj.load_with_allocations(
        conn, [w.uuid for w in writes])
    return ids, existing, current


def _lock_then_read_consumers(conn, writes, named):
    if conn.dialect.name == 'postgresql':
        # Read before queueing: writers of one provider wait for each
        # other, so every round trip made while holding the locks delays
        # the next writer. What is read here cannot go stale unnoticed:
        # ids never change, and a consumer changed meanwhile fails its
        # compare-and-swap (or, if new, its unique key) and the request
        # re-runs.
        read = _read_consumers(conn, writes)
        held = {row['provider_uuid'] for row in read[2]}
        _queue_for_providers(conn, named, held)
        return read
    # Before the first consistent read, so that on MySQL the snapshot
    # starts after the locks are ours; the providers the consumers hold
    # now are not known yet, so only the named ones' usage is locked
    # (a move's old provider is locked by its trigger as it is deleted).
    _queue_for_providers(conn, named, ())
    return _read_consumers(conn, writes)


def replace_alone(conn, writes, messages=None):
    """``replace`` as the whole transaction: the claim may commit with it."""
    replace(conn, writes, messages, alone=True)


def replace(conn, writes, messages=None, alone=False):
    """Give each consumer in ``writes`` exactly its new allocations.

    Raises the API's 400/409 errors, or ``Retry`` when another writer
    changed an involved provider or consumer since it was read."""
    messages = messages or Messages()
    named = _named_providers(writes)
    if alone and _claimed_in_one_trip(conn, writes, named):
        return
    claim = _read_for_claim(conn, writes, named) if alone else None
    if claim is None:
        ids, existing, current = _lock_then_read_consumers(conn, writes,
                                                           named)
    else:
        (ids, providers), existing, current = claim, {}, []
    for write in writes:
        consumer_obj.check_generation(write.uuid, existing.get(write.uuid),
                                      write.generation)
    # Emptied consumers' old providers are bumped too (spec §3.2).
    emptied = {w.uuid for w in writes if not w.allocations}
    touched = {r['provider_uuid'] for r in current
               if r['uuid'] in emptied}
    if claim is None:
        providers = _load_providers(conn, set(named) | touched)
    _check_providers_exist(named, providers)
    class_ids = _class_ids(conn, writes, messages)
    sums, order = _requested(writes, providers, class_ids)
    mine = collections.Counter()
    for row in current:
        mine[(row['resource_provider_id'], row['resource_class_id'])] += \
            row['used']
    _check_capacity(sums, order, {p['id']: p for p in providers.values()},
                    mine)
    bumped = [providers[u] for u in set(named) | touched]
    if _all_new_with_allocations(conn, writes, existing):
        _write_new_consumers(conn, writes, ids, class_ids, bumped, providers,
                             commit=claim is not None)
        return
    _bump_providers(conn, bumped)
    _save_consumers(conn, writes, existing,
                    {row['uuid'] for row in current}, ids)
    _replace_rows(conn, writes, class_ids, providers, existing)


def _read_for_claim(conn, writes, named):
    """A scheduler's claim (new consumers, each with allocations) on
    PostgreSQL through psycopg, in two round trips where the general
    path takes seven: the BEGIN and everything it reads in one, its
    writes and the COMMIT in the other (a new project or user adds its
    insert). (ids, providers) as
    _read_consumers and _load_providers give them, the providers' locks
    taken as _queue_for_providers takes them; None for any other write,
    or when a named consumer exists after all: nothing is locked then,
    and the general path runs in this transaction.

    The statements run one after the other in the pipeline, so the
    providers are read after their locks are granted, as in the general
    path. A consumer created after the probe fails the unique key of
    the write, and the request re-runs."""
    if not (pipeline.available(conn) and writes
            and all(w.allocations for w in writes)):
        return None
    wanted = _wanted_ids(writes)
    probe, lock, load = _claim_read_statements(conn.dialect)
    probe_params = consumer_obj.probe_parameters(
        wanted, [w.uuid for w in writes])
    uuids = sorted(named)
    probe_rows, _, provider_rows = pipeline.run(conn, [
        (probe[0], dict(probe[1], **probe_params)),
        (lock[0], dict(lock[1], uuids=uuids, lock_uuids=uuids,
                       consumers=probe_params['uuids'])),
        (load[0], dict(load[1], uuids=uuids))])
    ids, existing = consumer_obj.from_probe(conn, wanted, probe_rows)
    if existing:
        return None
    return ids, _providers_from(provider_rows)


_CLAIM_TEXTS = {}


def _claim_read_statements(dialect):
    """The (text, parameters) of _read_for_claim's three statements."""
    texts = _CLAIM_TEXTS.get(dialect.name)
    if texts is None:
        no_consumer = ~sa.exists().where(
            lists.one_of_param(dialect.name, _C.c.uuid, 'consumers'))
        texts = _CLAIM_TEXTS[dialect.name] = tuple(
            pipeline.compiled(statement, dialect) for statement in (
                consumer_obj.probe_statement(dialect.name),
                _lock_usage_then_providers(dialect.name,
                                           only_if=no_consumer),
                _load_providers_statement(dialect.name)))
    return texts


def _all_new_with_allocations(conn, writes, existing):
    """The write only adds (a scheduler's claim), on PostgreSQL."""
    return (conn.dialect.name == 'postgresql'
            and all(w.uuid not in existing and w.allocations
                    for w in writes))


def _typed_arrays(**types):
    return [sa.bindparam(name, type_=postgresql.ARRAY(type_))
            for name, type_ in types.items()]


def _claimed_in_one_trip(conn, writes, named):
    """A scheduler's claim (new consumers, each with allocations, on
    PostgreSQL through psycopg) in one round trip: the BEGIN, the locks
    _read_for_claim takes, _CLAIM_IN_ONE and the COMMIT. Whether it
    wrote; if not (a check failed, or might, as for a project not seen
    yet), the empty transaction is committed and the general path
    answers in a new one."""
    if not (pipeline.available(conn) and writes
            and all(w.allocations and w.generation in _NEW_CONSUMER
                    and _amounts_are_integers(w) for w in writes)):
        return False
    statements = _one_trip_statements(conn, writes, named)
    if statements is None:
        return False
    _, [(claimed, swapped)] = pipeline.run(conn, statements, commit=True)
    if claimed and not swapped:
        # See _write_new_consumers: nothing inserted, the request re-runs.
        raise db_engine.Retry()
    return claimed


def _one_trip_statements(conn, writes, named):
    """The locks and _CLAIM_IN_ONE, (text, parameters) each, for the
    claim of ``writes`` naming the providers ``named``; None if a class
    it names is unknown (the general path's 400)."""
    names = _class_names(writes)
    class_ids = resource_class.ids_for(conn, names)
    if len(class_ids) != len(names):
        return None
    lock, claim = _one_trip_texts(conn.dialect)
    uuids = sorted(named)
    params = dict(
        claim[1], now=tables.utcnow(),
        consumer_uuids=[w.uuid for w in writes],
        project_names=[w.project_id for w in writes],
        user_names=[w.user_id for w in writes],
        type_names=[w.consumer_type for w in writes],
        **_allocation_arrays(writes, class_ids, lambda uuid: uuid))
    return [(lock[0], dict(lock[1], uuids=uuids, lock_uuids=uuids,
                           consumers=sorted(w.uuid for w in writes))),
            (claim[0], params)]


def _allocation_arrays(writes, class_ids, provider_of):
    """The ``allocation_*`` arrays of the writes' rows, a column each,
    each row's provider as ``provider_of(its uuid)`` gives it."""
    rows = [(w.uuid, provider_of(uuid), class_ids[name], amount)
            for w in writes for uuid, resources in w.allocations.items()
            for name, amount in resources.items()]
    return {'allocation_' + name: [row[i] for row in rows]
            for i, name in enumerate(('consumers', 'providers', 'classes',
                                      'used'))}


def _amounts_are_integers(write):
    """Every amount within the database's integer column, which the
    statement's arrays are typed as: a larger one (over every unit limit)
    is the general path's to refuse."""
    return all(amount <= inventory.MAX_INT
               for resources in write.allocations.values()
               for amount in resources.values())


# A consumer the write may create: none expected (null), or not checked
# (before 1.28).
_NEW_CONSUMER = (None, consumer_obj.UNCHECKED)

# The claim's checks and writes as one statement, run once the locks
# are granted, so that it reads the usage as the general path does; it
# checks every amount's units where that path checks each class's
# first. ``claimed`` is true only if every named provider,
# project and user (and consumer type, if named) exists, no named
# consumer does, and each amount fits its inventory's units and, summed
# per provider and class, its capacity beside the usage read here. The
# writes are those of _ADD_NEW_CONSUMERS, with its compare-and-swap of
# the generations read here: ``swapped`` is false if a provider changed
# after this statement's snapshot (one the locks did not cover: none is
# locked while a named consumer exists), and then nothing was inserted
# and the write re-runs.
_CLAIM_IN_ONE = sa.text("""
WITH named_consumers AS (
    SELECT c.uuid, p.id AS project_id, u.id AS user_id,
           t.id AS type_id, c.type_name
    FROM unnest(:consumer_uuids, :project_names, :user_names, :type_names)
        AS c (uuid, project_name, user_name, type_name)
    LEFT JOIN projects AS p ON p.external_id = c.project_name
    LEFT JOIN users AS u ON u.external_id = c.user_name
    LEFT JOIN consumer_types AS t ON t.name = c.type_name
), wanted AS (
    SELECT w.consumer_uuid, rp.id AS provider_id, rp.generation,
           w.class_id, w.used
    FROM unnest(:allocation_consumers, :allocation_providers,
                :allocation_classes, :allocation_used)
        AS w (consumer_uuid, provider_uuid, class_id, used)
    LEFT JOIN resource_providers AS rp ON rp.uuid = w.provider_uuid
), per_class AS (
    SELECT bool_and(w.provider_id IS NOT NULL AND inv.id IS NOT NULL
                    AND w.used >= inv.min_unit AND w.used <= inv.max_unit
                    AND w.used % inv.step_size = 0) AS units_fit,
           sum(w.used) + coalesce(max(usage.used), 0)
               <= (max(inv.total) - max(inv.reserved))
                  * max(inv.allocation_ratio) AS fits
    FROM wanted AS w
    LEFT JOIN inventories AS inv
        ON inv.resource_provider_id = w.provider_id
        AND inv.resource_class_id = w.class_id
    LEFT JOIN usage_totals AS usage
        ON usage.resource_provider_id = w.provider_id
        AND usage.resource_class_id = w.class_id
    GROUP BY w.provider_id, w.class_id
), verdict AS (
    SELECT coalesce((SELECT bool_and(units_fit AND fits) FROM per_class),
                    false)
        AND NOT EXISTS (
            SELECT 1 FROM named_consumers
            WHERE project_id IS NULL OR user_id IS NULL
               OR (type_name IS NOT NULL AND type_id IS NULL))
        AND NOT EXISTS (
            SELECT 1 FROM consumers WHERE uuid = ANY(:consumer_uuids))
        AS claimed
), bumped AS (
    UPDATE resource_providers AS rp
    SET generation = rp.generation + 1, updated_at = :now
    FROM (SELECT DISTINCT provider_id, generation FROM wanted) AS seen
    WHERE rp.id = seen.provider_id AND rp.generation = seen.generation
      AND (SELECT claimed FROM verdict)
    RETURNING rp.id
), swap AS (
    SELECT (SELECT claimed FROM verdict)
        AND (SELECT count(*) FROM bumped)
            = (SELECT count(DISTINCT provider_id) FROM wanted) AS swapped
), added_consumers AS (
    INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id,
                           generation, created_at)
    SELECT uuid, project_id, user_id, type_id, 1, :now
    FROM named_consumers WHERE (SELECT swapped FROM swap)
), added_allocations AS (
    INSERT INTO allocations (consumer_id, resource_provider_id,
                             resource_class_id, used, created_at)
    SELECT consumer_uuid, provider_id, class_id, used, :now
    FROM wanted WHERE (SELECT swapped FROM swap)
)
SELECT claimed, swapped FROM verdict, swap
""").bindparams(
    sa.bindparam('now', type_=sa.DateTime),
    *_typed_arrays(consumer_uuids=sa.String, project_names=sa.String,
                   user_names=sa.String, type_names=sa.String,
                   allocation_consumers=sa.String,
                   allocation_providers=sa.String,
                   allocation_classes=sa.Integer,
                   allocation_used=sa.Integer)
)

_ONE_TRIP_TEXTS = {}


def _one_trip_texts(dialect):
    """The (text, parameters) of the locks and of _CLAIM_IN_ONE."""
    texts = _ONE_TRIP_TEXTS.get(dialect.name)
    if texts is None:
        _, lock, _ = _claim_read_statements(dialect)
        texts = _ONE_TRIP_TEXTS[dialect.name] = (
            lock, pipeline.compiled(_CLAIM_IN_ONE, dialect))
    return texts


# A claim's writes as one statement: the providers' compare-and-swap, the
# new consumers and their allocations (the usage totals follow by
# trigger). Made one by one they were three round trips, each made while
# holding the providers' locks (so each delayed every writer queued
# behind), and this runs whenever a scheduler claims a host. The rows are
# inserted only if every provider's swap matched, and the swap's count
# comes back to be checked as _bump_providers checks its own: the COMMIT
# may already be on its way in the same round trip (_read_for_claim).
_ADD_NEW_CONSUMERS = sa.text("""
WITH bumped AS (
    UPDATE resource_providers AS rp
    SET generation = rp.generation + 1, updated_at = :now
    FROM unnest(:provider_ids, :generations) AS seen (id, generation)
    WHERE rp.id = seen.id AND rp.generation = seen.generation
    RETURNING rp.id
), added_consumers AS (
    INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id,
                           generation, created_at)
    SELECT uuid, project_id, user_id, type_id, 1, :now
    FROM unnest(:consumer_uuids, :project_ids, :user_ids, :type_ids)
        AS added (uuid, project_id, user_id, type_id)
    WHERE (SELECT count(*) FROM bumped) = :swaps
), added_allocations AS (
    INSERT INTO allocations (consumer_id, resource_provider_id,
                             resource_class_id, used, created_at)
    SELECT consumer_id, provider_id, class_id, used, :now
    FROM unnest(:allocation_consumers, :allocation_providers,
                :allocation_classes, :allocation_used)
        AS added (consumer_id, provider_id, class_id, used)
    WHERE (SELECT count(*) FROM bumped) = :swaps
)
SELECT count(*) FROM bumped
""").bindparams(
    sa.bindparam('now', type_=sa.DateTime),
    sa.bindparam('swaps', type_=sa.Integer),
    *_typed_arrays(provider_ids=sa.Integer, generations=sa.Integer,
                   consumer_uuids=sa.String, project_ids=sa.Integer,
                   user_ids=sa.Integer, type_ids=sa.Integer,
                   allocation_consumers=sa.String,
                   allocation_providers=sa.Integer,
                   allocation_classes=sa.Integer,
                   allocation_used=sa.Integer)
)


def _write_new_consumers(conn, writes, ids, class_ids, bumped, providers,
                         commit=False):
    """_bump_providers, _save_consumers and _replace_rows for writes of
    new consumers only, in one statement (PostgreSQL); with ``commit``
    (through psycopg), the COMMIT in the same round trip.

    A swap that matched fewer providers than it named inserted nothing;
    the request then re-runs, as for _bump_providers. Committed already,
    it leaves those providers' generations one higher, which tells their
    readers only that something changed. Under the locks _read_for_claim
    takes the swap always matches; it can fall short only when a
    consumer of the claim appeared between its probe and its locks, and
    then the insert fails the consumer's unique key anyway."""
    ordered = sorted(bumped, key=lambda p: p['id'])
    types = ids['type']
    params = {
        'now': tables.utcnow(),
        'provider_ids': [p['id'] for p in ordered],
        'generations': [p['generation'] for p in ordered],
        'consumer_uuids': [w.uuid for w in writes],
        'project_ids': [ids['project'][w.project_id] for w in writes],
        'user_ids': [ids['user'][w.user_id] for w in writes],
        'type_ids': [None if w.consumer_type is None
                     else types[w.consumer_type] for w in writes],
    }
    params.update(_allocation_arrays(
        writes, class_ids, lambda uuid: providers[uuid]['id']))
    params['swaps'] = len(ordered)
    if commit:
        text, defaults = _add_new_consumers_text(conn.dialect)
        [[(swapped,)]] = pipeline.run(conn, [(text, dict(defaults, **params))],
                                      commit=True)
    else:
        swapped = conn.execute(_ADD_NEW_CONSUMERS, params).scalar()
    if swapped != len(ordered):
        raise db_engine.Retry()


_ADD_NEW_CONSUMERS_TEXTS = {}


def _add_new_consumers_text(dialect):
    text = _ADD_NEW_CONSUMERS_TEXTS.get(dialect.name)
    if text is None:
        text = _ADD_NEW_CONSUMERS_TEXTS[dialect.name] = pipeline.compiled(
            _ADD_NEW_CONSUMERS, dialect)
    return text
