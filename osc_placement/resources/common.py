"""Pieces shared by every placement command."""

from osc_placement import version


class PlacementCommand(version.CheckerMixin):
    """Mixin for placement commands: version gate and client access.

    ``min_version`` is the microversion the whole command needs; it is
    checked once, before ``take_action``, with upstream's failure text.
    """

    min_version = version.MIN_VERSION

    @property
    def placement(self):
        return self.app.client_manager.placement

    def run(self, parsed_args):
        self.check_version(version.ge(self.min_version))
        return super().run(parsed_args)

    def get_json(self, url, **params):
        """GET ``url`` (with query ``params``) and return the JSON body."""
        return self.placement.request('GET', url, params=params).json()
