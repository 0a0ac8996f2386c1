"""OpenStackClient plugin for Placement, with an embedded reference server."""
