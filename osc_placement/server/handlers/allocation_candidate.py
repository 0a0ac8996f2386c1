"""GET /allocation_candidates (1.10)."""

from osc_placement.server import http_api
from osc_placement.server.objects import candidate_api
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import request_groups
from osc_placement.server.schemas import allocation_candidate as schema


def list_candidates(req):
    req.authorize('placement:allocation_candidates:list')
    # Checking and parsing are pure: a bad query costs no database round
    # trip.
    pairs = list(req.GET.items())
    schema.check_query(pairs, req.version)
    request = request_groups.parse_candidate_request(pairs, req.version)
    options = candidate_search.SearchOptions.from_conf(req.app.conf.placement)
    with req.db.read() as conn:
        answer = candidate_api.answer(request, conn, options)
    resp = http_api.Response(200, answer.body)
    # What the answer is built from is freed once it is sent.
    resp.held = answer.held
    return http_api.cached(req, resp, answer.last_modified)
