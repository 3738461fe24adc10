// Cap'n Proto encoding of a subsystem's model description (private to the worker library; the
// master encodes with it, the worker decodes).
#pragma once

#include "macrostep/ipc/schema/control.capnp.h"
#include "macrostep/library/model_description.hpp"

namespace macrostep::worker {

namespace schema = macrostep::ipc::schema;

// Throws std::invalid_argument for a description that cannot be encoded.
void encode_model(const library::ModelDescription& model, schema::ModelConfig::Builder out);
// Throws std::runtime_error naming the problem (no model, unknown type, inconsistent sizes).
library::ModelDescription decode_model(schema::ModelConfig::Reader in);

}  // namespace macrostep::worker
