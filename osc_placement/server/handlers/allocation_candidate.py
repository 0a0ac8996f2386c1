"""GET /allocation_candidates (1.10)."""

from osc_placement.server import http_api
from osc_placement.server.objects import candidate_api
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import request_groups
from osc_placement.server.schemas import allocation_candidate as schema


def list_candidates(req):
    req.authorize('placement:allocation_candidates:list')
    request = parsed(req)
    options = candidate_search.SearchOptions.from_conf(req.app.conf.placement)
    with req.db.read() as conn:
        answer = candidate_api.answer(request, conn, options)
    resp = http_api.Response(200, answer.body)
    # What the answer is built from is freed once it is sent.
    resp.held = answer.held
    return http_api.cached(req, resp, answer.last_modified)


# (query string, microversion) -> the CandidateRequest parsed from them.
# A scheduler sends a few queries again and again; handing out the same
# object for each also lets a kept structure recognise a request it
# answered (candidate_response.RememberedAnswers). Emptied when full.
_PARSED = {}
PARSED_MAX = 1000


def parsed(req):
    """The request's query checked and parsed (errors.BadRequest if it is
    wrong), once per query string and microversion. Checking and parsing
    are pure: a bad query costs no database round trip."""
    key = (req.environ.get('QUERY_STRING', ''), req.version)
    request = _PARSED.get(key)
    if request is None:
        pairs = list(req.GET.items())
        schema.check_query(pairs, req.version)
        request = request_groups.parse_candidate_request(pairs, req.version)
        if len(_PARSED) >= PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = request
    return request
