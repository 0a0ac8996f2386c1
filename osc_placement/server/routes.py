"""The route table: path template -> {method: handler}.

Adding a route is one line here. Methods are listed in upstream's
declaration order, which is the order of the ``Allow`` header on 405.
"""

from osc_placement.server.handlers import aggregate
from osc_placement.server.handlers import allocation
from osc_placement.server.handlers import allocation_candidate
from osc_placement.server.handlers import inventory
from osc_placement.server.handlers import resource_class
from osc_placement.server.handlers import reshaper
from osc_placement.server.handlers import resource_provider
from osc_placement.server.handlers import root
from osc_placement.server.handlers import trait
from osc_placement.server.handlers import usage

_RP = '/resource_providers/{uuid}'

ROUTES = [
    ('', {'GET': root.home}),
    ('/', {'GET': root.home}),
    ('/resource_classes', {'GET': resource_class.list_classes,
                           'POST': resource_class.create_class}),
    ('/resource_classes/{name}', {'GET': resource_class.show_class,
                                  'PUT': resource_class.update_class,
                                  'DELETE': resource_class.delete_class}),
    ('/resource_providers', {'GET': resource_provider.list_providers,
                             'POST': resource_provider.create_provider}),
    (_RP, {'GET': resource_provider.show_provider,
           'DELETE': resource_provider.delete_provider,
           'PUT': resource_provider.update_provider}),
    (_RP + '/inventories', {'GET': inventory.list_inventories,
                            'POST': inventory.create_inventory,
                            'PUT': inventory.set_inventories,
                            'DELETE': inventory.delete_inventories}),
    (_RP + '/inventories/{resource_class}', {
        'GET': inventory.show_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory}),
    (_RP + '/usages', {'GET': usage.provider_usages}),
    (_RP + '/aggregates', {'GET': aggregate.get_aggregates,
                           'PUT': aggregate.set_aggregates}),
    ('/traits', {'GET': trait.list_traits}),
    ('/traits/{name}', {'GET': trait.show_trait,
                        'PUT': trait.put_trait,
                        'DELETE': trait.delete_trait}),
    (_RP + '/traits', {'GET': trait.list_provider_traits,
                       'PUT': trait.set_provider_traits,
                       'DELETE': trait.delete_provider_traits}),
    ('/usages', {'GET': usage.project_usages}),
    (_RP + '/allocations', {'GET': allocation.list_provider_allocations}),
    ('/allocations', {'POST': allocation.manage_allocations}),
    ('/allocations/{consumer_uuid}', {
        'GET': allocation.get_allocations,
        'PUT': allocation.set_allocations,
        'DELETE': allocation.delete_allocations}),
    ('/reshaper', {'POST': reshaper.reshape}),
    ('/allocation_candidates', {'GET': allocation_candidate.list_candidates}),
]
