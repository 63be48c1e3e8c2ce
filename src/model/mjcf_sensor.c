// mjcf_sensor.c - MJCF <sensor>: the sensor types of physSensorType with MuJoCo 2.2.2's attributes (name, noise,
// cutoff; joint, actuator, site, body, objtype/objname); every other sensor type, and a frame sensor's reference
// frame (reftype/refname), refuses the model with a message naming the element (docs/mjcf.md's coverage table).
// MuJoCo 2.2.2 has no default classes for sensors: only the element's own attributes count.
#include <string.h>

#include "mjcf_reader.h"

// MuJoCo 2.2.2's sensor elements physid does not compute (refused by name)
static const char* const REFUSED[] = {"magnetometer", "rangefinder", "camprojection", "tendonpos", "tendonvel",
                                      "actuatorpos", "actuatorvel", "ballquat", "ballangvel", "jointlimitpos",
                                      "jointlimitvel", "jointlimitfrc", "tendonlimitpos", "tendonlimitvel",
                                      "tendonlimitfrc", "framexaxis", "frameyaxis", "framezaxis", "framelinacc",
                                      "frameangacc", "subtreelinvel", "subtreeangmom", "clock", "user", "plugin",
                                      NULL};

// the attribute naming the sensed object of a sensor type (NULL: objtype/objname) and its object type
static const char* target_attr(int type, int* objtype) {
  switch (type) {
    case PHYS_SENS_JOINTPOS:
    case PHYS_SENS_JOINTVEL: *objtype = PHYS_OBJ_JOINT; return "joint";
    case PHYS_SENS_ACTUATORFRC: *objtype = PHYS_OBJ_ACTUATOR; return "actuator";
    case PHYS_SENS_SUBTREECOM: *objtype = PHYS_OBJ_BODY; return "body";
    case PHYS_SENS_FRAMEPOS:
    case PHYS_SENS_FRAMEQUAT:
    case PHYS_SENS_FRAMELINVEL:
    case PHYS_SENS_FRAMEANGVEL: *objtype = PHYS_OBJ_NONE; return NULL;
    default: *objtype = PHYS_OBJ_SITE; return "site";
  }
}

// a frame sensor's objtype (body, xbody, geom, site; camera refused) and objname
static physStatus frame_target(mjcfCtx* c, xmlNode* el, physSpecSensor* se) {
  static const char* const OBJ[] = {"body", "xbody", "geom", "site", "camera", NULL};
  static const int OBJTYPE[] = {PHYS_OBJ_BODY, PHYS_OBJ_XBODY, PHYS_OBJ_GEOM, PHYS_OBJ_SITE};
  mjcfElem own = {el, K_NONE, 0};
  int k = -1, found;
  physStatus st = mjcf_get_keyword(c, &own, "objtype", OBJ, &k, &found);
  if (st) return st;
  if (!found) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'objtype' is required");
  if (k == 4) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "frame sensors on cameras are not supported");
  se->objtype = OBJTYPE[k];
  if (mjcf_attr_text(el, "reftype") || mjcf_attr_text(el, "refname")) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a reference frame (reftype, refname) is not supported: "
                           "frame sensors measure in the world frame");
  }
  if ((st = mjcf_get_name(c, el, "objname", se->target))) return st;
  if (!se->target[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'objname' is required");
  return PHYS_OK;
}

// one sensor element of type `type`
static physStatus parse_sensor(mjcfCtx* c, xmlNode* el, int type) {
  physSpecSensor* se;
  MJCF_ADD(c, el, sensor, sensor, se);
  se->type = type;
  mjcfElem own = {el, K_NONE, 0};
  physStatus st = mjcf_get_name(c, el, "name", se->name);
  if (!st) st = mjcf_get_nonneg(c, &own, "noise", &se->noise);
  if (!st) st = mjcf_get_nonneg(c, &own, "cutoff", &se->cutoff);
  if (st) return st;
  const char* attr = target_attr(type, &se->objtype);
  if (!attr) return frame_target(c, el, se);
  if ((st = mjcf_get_name(c, el, attr, se->target))) return st;
  if (!se->target[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute '%s' is required", attr);
  return PHYS_OK;
}

// <sensor>: each child a supported sensor, else the model is refused
physStatus mjcf_parse_sensor(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char* name = (const char*)ch->name;
    int type = phys_sensor_from_name(name);
    if (type >= 0) {
      physStatus st = parse_sensor(c, ch, type);
      if (st) return st;
      continue;
    }
    for (int i = 0; REFUSED[i]; i++) {
      if (!strcmp(REFUSED[i], name)) {
        return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "<%s> sensors are not supported (docs/mjcf.md lists the "
                               "supported sensors); remove it to load the model", name);
      }
    }
    return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "unknown sensor element <%s>", name);
  }
  return PHYS_OK;
}
