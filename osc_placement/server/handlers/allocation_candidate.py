"""GET /allocation_candidates (1.10)."""

from osc_placement.server import http_api
from osc_placement.server.db import tables
from osc_placement.server.objects import candidate_api
from osc_placement.server.objects import candidate_fetch
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import request_groups
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import trait as trait_obj


def list_candidates(req):
    req.authorize('placement:allocation_candidates:list')
    # Parsing is pure: a bad query costs no database round trip.
    request = request_groups.parse_candidate_request(list(req.GET.items()),
                                                     req.version)
    # What the answer is built from is freed once it is sent.
    held = []
    with req.db.read() as conn:
        body = candidate_api.answer_in_windows(
            request, _reader(conn, request),
            search_options(req.app.conf.placement), held)
    resp = http_api.Response(200, body)
    resp.held = held
    return http_api.cached(req, resp, tables.utcnow())


def _reader(conn, request):
    """Check the request's names (upstream's 400s), then open its slice."""
    spec = candidate_search.snapshot_needs(request)
    class_ids = resource_class.ids_for(conn,
                                       sorted(request.resource_class_names()))
    # The slice's traits include MISC_SHARES_VIA_AGGREGATE even when the
    # request does not name it: sharing providers are found by it.
    trait_ids = trait_obj.ids_for(conn, sorted(spec.traits))
    request.validate_names(class_ids, trait_ids)
    return candidate_fetch.SliceReader(conn, spec, class_ids, trait_ids)


def search_options(placement_conf):
    return candidate_search.SearchOptions(
        max_candidates=placement_conf.max_allocation_candidates,
        strategy=placement_conf.allocation_candidates_generation_strategy,
        randomize=placement_conf.randomize_allocation_candidates)
