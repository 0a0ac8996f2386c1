# SPDX-License-Identifier: Apache-2.0
"""/allocations/{consumer_uuid}, POST /allocations (1.13) and
/resource_providers/{uuid}/allocations."""

from oslo_utils import uuidutils

from osc_placement.server import errors
from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import allocation as alloc_obj
from osc_placement.server.objects import consumer as consumer_obj
from osc_placement.server import schemas
from osc_placement.server.schemas import allocation as schema


# -- reads ---------------------------------------------------------------

def get_allocations(req):
    req.authorize('placement:allocations:list')
    uuid = req.url_vars['consumer_uuid']
    with req.db.read() as conn:
        allocations, latest, consumer = alloc_obj.for_consumer(conn, uuid)
    body = {'allocations': allocations}
    if consumer is not None:
        body.update(_consumer_fields(req.version, consumer))
    return http_api.cached(req, http_api.Response(200, body),
                           latest or common.now())


def _consumer_fields(version, consumer):
    """What GET /allocations/{c} adds about the consumer, by version."""
    fields = {}
    if version.supports('consumer_details'):
        fields['project_id'] = consumer['project_id']
        fields['user_id'] = consumer['user_id']
    if version.supports('consumer_generations'):
        fields['consumer_generation'] = consumer['generation']
    if version.supports('consumer_types'):
        fields['consumer_type'] = consumer['consumer_type'] or 'unknown'
    return fields


def list_provider_allocations(req):
    req.authorize('placement:resource_providers:allocations:list')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        generation, allocations, latest = alloc_obj.for_provider(
            conn, uuid, "Resource provider '%(uuid)s' not found: No resource "
            "provider with uuid %(uuid)s found")
    if not req.version.supports('consumer_generations'):
        for entry in allocations.values():
            del entry['consumer_generation']
    body = {'allocations': allocations,
            'resource_provider_generation': generation}
    return http_api.cached(req, http_api.Response(200, body),
                           latest or common.now())


# -- writes ----------------------------------------------------------------

def _consumer_uuid_or_400(value):
    if not uuidutils.is_uuid_like(value):
        raise errors.BadRequest('Malformed consumer_uuid: %s' % value)
    return common.normalize_uuid(value)


def _resources_by_provider(version, allocations):
    """{provider uuid: {class: amount}} from the list (<1.12) or dict
    shape; in the list a repeated provider's last entry wins."""
    if not version.supports('dict_allocations'):
        return {item['resource_provider']['uuid']: item['resources']
                for item in allocations}
    return {uuid: entry['resources'] for uuid, entry in allocations.items()}


def consumer_write(req, uuid, data):
    """One consumer's part of a body, with the version's defaults."""
    placement = req.app.conf.placement
    version = req.version
    write = alloc_obj.ConsumerWrite(
        uuid=uuid,
        project_id=data.get('project_id',
                            placement.incomplete_consumer_project_id),
        user_id=data.get('user_id', placement.incomplete_consumer_user_id),
        allocations=_resources_by_provider(version, data['allocations']))
    if version.supports('consumer_generations'):
        write.generation = data['consumer_generation']
    if version.supports('consumer_types'):
        write.consumer_type = data['consumer_type']
    return write


def set_allocations(req):
    req.authorize('placement:allocations:update')
    uuid = _consumer_uuid_or_400(req.url_vars['consumer_uuid'])
    data = req.json_body(
        schemas.for_version(schema.PUT, req.version),
        direct_check=schemas.for_version(schema.PUT_DIRECT, req.version))
    messages = alloc_obj.Messages(
        unknown_class='Unable to allocate inventory for consumer %(uuid)s: '
        'No such resource class %(name)s.', fields={'uuid': uuid})
    alloc_obj.write_or_409(req.db, alloc_obj.replace_alone,
                           [consumer_write(req, uuid, data)], messages)
    return http_api.Response(204)


def manage_allocations(req):
    req.authorize('placement:allocations:manage')
    data = req.json_body(schemas.for_version(schema.POST, req.version))
    # Consumer keys are used as given, like upstream [quirk].
    writes = [consumer_write(req, uuid, entry)
              for uuid, entry in data.items()]
    messages = alloc_obj.Messages(
        unknown_class='Unable to allocate inventory No such resource '
        'class %(name)s.')
    alloc_obj.write_or_409(req.db, alloc_obj.replace_alone, writes, messages)
    return http_api.Response(204)


def delete_allocations(req):
    req.authorize('placement:allocations:delete')
    uuid = req.url_vars['consumer_uuid']
    # Upstream's unsafe delete: no generation check, no provider bump.
    if not req.db.run_write(consumer_obj.delete_with_allocations, uuid):
        raise errors.NotFound("No allocations for consumer '%s'" % uuid)
    return http_api.Response(204)
