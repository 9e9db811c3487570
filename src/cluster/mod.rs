//! Local Apache Cassandra clusters: plan (pure topology), render (config files), dist (jars), supervise (processes).
