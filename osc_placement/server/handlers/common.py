# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by handlers: uuids, provider representation and
change times."""

import uuid as uuidlib

from oslo_utils import timeutils


def normalize_uuid(value):
    return str(uuidlib.UUID(value))


def provider_links(req, uuid):
    base = '/resource_providers/' + uuid
    links = [{'rel': 'self', 'href': req.link(base)},
             {'rel': 'inventories', 'href': req.link(base + '/inventories')},
             {'rel': 'usages', 'href': req.link(base + '/usages')}]
    version = req.version
    if version.supports('aggregates'):
        links.append({'rel': 'aggregates',
                      'href': req.link(base + '/aggregates')})
    if version.supports('traits'):
        links.append({'rel': 'traits', 'href': req.link(base + '/traits')})
    if version.supports('provider_allocations_link'):
        links.append({'rel': 'allocations',
                      'href': req.link(base + '/allocations')})
    return links


def provider_json(req, row):
    body = {'uuid': row['uuid'], 'name': row['name'],
            'generation': row['generation'],
            'links': provider_links(req, row['uuid'])}
    if req.version.supports('nested_providers'):
        body['parent_provider_uuid'] = row['parent_provider_uuid']
        body['root_provider_uuid'] = row['root_provider_uuid']
    return body


def changed_at(row):
    return row['updated_at'] or row['created_at']


def now():
    """Last-Modified without a stored time: the answer's, as upstream's."""
    return timeutils.utcnow()
