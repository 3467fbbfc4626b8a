"""The gettext catalogs of the error messages (domain ``contextwise``)."""
