# SPDX-License-Identifier: Apache-2.0
"""POST /reshaper (1.30)."""

from osc_placement.server.handlers import allocation
from osc_placement.server import http_api
from osc_placement.server.objects import allocation as alloc_obj
from osc_placement.server.objects import reshaper as reshaper_obj
from osc_placement.server import schemas
from osc_placement.server.schemas import reshaper as schema


def reshape(req):
    req.authorize('placement:reshaper:reshape')
    data = req.json_body(schemas.for_version(schema.RESHAPE, req.version))
    http_api.validate(data, schema.GUARD, 'JSON does not validate: %s')
    entries = [reshaper_obj.ProviderInventory(
        uuid, body['resource_provider_generation'], body['inventories'])
        for uuid, body in data['inventories'].items()]
    writes = [allocation.consumer_write(req, uuid, entry)
              for uuid, entry in data['allocations'].items()]
    alloc_obj.write_or_409(req.db, reshaper_obj.reshape, entries, writes,
                           conflict=reshaper_obj.CONCURRENT)
    return http_api.Response(204)
