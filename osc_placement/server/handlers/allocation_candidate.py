# SPDX-License-Identifier: Apache-2.0
"""GET /allocation_candidates (1.10)."""

from osc_placement.server.candidates import door
from osc_placement.server.candidates import request as candidate_request
from osc_placement.server import http_api
from osc_placement.server.schemas import allocation_candidate as schema
from osc_placement.server.schemas import request_groups


def list_candidates(req):
    req.authorize('placement:allocation_candidates:list')
    engine = req.app.candidates
    request = parsed(req, engine.parsed)
    options = candidate_request.SearchOptions.from_conf(
        req.app.conf.placement)
    with req.db.read() as conn:
        answer = door.answer(engine, request, conn, options)
    if req.app.metrics is not None:
        req.app.metrics.candidates_answered(
            answer.count, door.cut_by(request, options, answer.count))
    resp = http_api.Response(200, answer.body)
    # What the answer is built from is freed once it is sent.
    resp.held = answer.held
    return http_api.cached(req, resp, answer.last_modified)


def parsed(req, known):
    """The request's query checked and parsed (errors.BadRequest if it is
    wrong), once per query string and microversion while ``known`` (the
    engine's memo.ParsedRequests) remembers it. Checking and parsing are
    pure: a bad query costs no database round trip."""
    def parse():
        pairs = list(req.GET.items())
        schema.check_query(pairs, req.version)
        return request_groups.parse_candidate_request(pairs, req.version)
    return known.get((req.environ.get('QUERY_STRING', ''), req.version),
                     parse)
