"""The exposure profiles: one registry row per profile the spec defines (registry), the
lifecycle every profile's runtime shares, and the profiles that are packages of their own
(aggregate)."""
