"""The embedded reference OpenStack Placement server."""
