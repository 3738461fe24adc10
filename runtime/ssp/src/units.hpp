// Units of an SSP (private to macrostep_ssp): the ssc:Unit definitions of an SSD, of a parameter
// set and of an FMU's model description, and the linear map between two units of the same base
// units (SSP 1.0 §5, Units: a value v of a unit is factor·v + offset in SI).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "macrostep/fmu/fmu.hpp"
#include "xml.hpp"

namespace macrostep::ssp::detail {

// A unit (fmu::UnitFacts: its name, base-unit exponents, factor and offset) and where it is
// defined.
struct UnitDefinition : fmu::UnitFacts {
  std::string where;  // for messages: "sys.ssp/SystemStructure.ssd:27", "the FMU a.fmu"
};

// The units one file defines, by name.
using UnitTable = std::map<std::string, UnitDefinition>;

// y = gain·x + offset.
struct Affine {
  double gain = 1.0, offset = 0.0;

  bool identity() const { return gain == 1.0 && offset == 0.0; }
  // This map, then `next`.
  Affine then(const Affine& next) const {
    return {next.gain * gain, next.gain * offset + next.offset};
  }
  double operator()(double x) const { return gain * x + offset; }
};

// A unit where one thing uses it: its name (empty: none) and the tables that may define it,
// nearest first (the first that defines the name is taken; conversion refuses a name that two of
// them define differently).
struct UnitUse {
  std::string name;
  std::vector<const UnitTable*> scopes;
};

// The ssc:Unit elements of `units` (an ssd:Units or ssv:Units element of `file`) into `out`;
// refuses a unit without ssc:BaseUnit, an exponent that is not an integer, a factor or offset
// that is not a finite number, a factor of 0 and a name defined twice.
void read_units(const std::string& file, const xmlNode* units, UnitTable& out);

// The map of values in `from` to values in `to`: the identity when the names are equal or either
// is empty (nothing to convert: a value without a unit is taken as it is). Throws
// std::invalid_argument with the problem when a unit is defined nowhere in its scopes, defined
// differently in two of them, or the two have different base units.
Affine conversion(const UnitUse& from, const UnitUse& to);

}  // namespace macrostep::ssp::detail
