package testweb

import "strings"

// The vocabularies below are constants (not package variables) so that the
// package holds no global state; newVocab splits them once per Web.

// hostWordsText holds ASCII words used to build host names.
const hostWordsText = `andes pacifico austral cordillera valle puerto norte sur maule biobio
araucania atacama copihue condor huemul pudu lago volcan mar sol luna cielo tierra fuego
agua viento roble alerce araucaria quillay boldo canelo lenga nalca cerro isla bahia playa
rio campo ciudad pueblo plaza mercado feria libreria editorial radio diario revista
deportes futbol musica cine teatro arte cultura historia ciencia salud clinica farmacia
dental vinos vina cafe panaderia cocina sabores turismo hotel hostal viajes tours autos
motos bicicletas transporte carga logistica minera cobre energia solar agro frutas pesca
salmon forestal madera construccion inmobiliaria casas hogar muebles ferreteria tecnologia
software redes datos digital consultores abogados contadores seguros credito finanzas
colegio escuela liceo instituto academia jardin familia mascotas veterinaria gimnasio yoga
moda ropa zapatos joyas flores regalos juguetes libros fotos video eventos bodas fiesta
fundacion club asociacion sindicato municipal comuna region servicio archivo museo
biblioteca observatorio estrella cometa faro ancla velero vapor tren metro ruta camino
puente torre castillo patagonia chiloe magallanes elqui limari choapa aconcagua maipo
cachapoal colchagua curico linares nuble itata malleco cautin valdivia osorno llanquihue
aysen arica tarapaca iquique antofagasta copiapo serena coquimbo quillota vicuna ovalle`

// textWordsText holds Spanish-like words (with accents) for body text.
// Every character must be representable in ISO-8859-1.
const textWordsText = `el la los las un una de del en con por para sobre entre hacia desde
año región información educación señal niño café música página política económico
pequeño mañana corazón jardín árbol último público nación comunicación servicio
desarrollo proyecto gobierno ciudad país historia cultura ciencia tecnología salud
trabajo empresa comunidad municipio universidad estudiante profesor investigación
análisis estadística resultado proceso sistema programa acción opinión reunión
niñez compañía montaña océano río lluvia invierno verano otoño primavera día
semana mes fecha hora noticia artículo revista periódico diario crónica entrevista
fotografía imagen sonido película teatro canción poesía novela cuento leyenda
pueblo barrio calle avenida plaza mercado feria tienda producto precio oferta
calidad atención cliente usuario ciudadano vecino familia amigo hermano señor señora
grande bueno nuevo antiguo moderno rápido lento fácil difícil útil importante
también además según aunque mientras después antes siempre nunca quizás así
está están será sería había hacer tener decir poder querer llegar pasar deber
mundo vida tiempo forma parte lugar caso punto grupo problema hecho mano ojo
cómo cuándo dónde qué porqué acción reacción camión avión balcón pingüino
zoológico teléfono número código técnico práctico clásico lógico rústico pacífico`

// sectionWordsText holds site section names used in paths.
const sectionWordsText = `noticias productos servicios nosotros contacto institucional prensa
eventos cursos proyectos galeria documentos ayuda tienda blog recursos agenda equipo
historia investigacion catalogo ofertas clientes empleos transparencia tramites`

// deptWordsText holds university department labels.
const deptWordsText = `dcc fcfm ing med der econ bib alumnos postgrado fisica quimica
matematicas artes letras agronomia odontologia`

// subWordsText holds subdomain labels added to existing registrable domains.
const subWordsText = `blog tienda noticias foro docs eventos biblioteca portal ventas
soporte cursos radio tv intranet www2`

// oosTLDsText holds suffixes for out-of-scope hosts.
const oosTLDsText = `com org net es de com.ar com.pe fr it co.uk io`

// botNamesText holds product tokens of "other" bots named in robots.txt.
const botNamesText = `BadBot EvilScraper MJ12bot AhrefsBot SemrushBot DotBot`

// privPrefixesText holds robots-disallowed path prefixes.
const privPrefixesText = `/private/ /admin/ /intranet/ /privado/ /borradores/ /tmp/`

// docWordsText holds words for PDF file names.
const docWordsText = `informe memoria balance reglamento acta boletin manual guia
presupuesto licitacion convenio estudio`

// genericAnchorsText holds generic anchor texts separated by '|'.
const genericAnchorsText = `Leer más|Ver más|Más información|aquí|Siguiente|Ver detalle|Continuar|Ir a la página|Ver artículo`

// vocab is the set of word lists used by a Web.
type vocab struct {
	host, text, sections, depts, subs, tlds, bots, priv, docs, anchors []string
}

// newVocab splits the vocabulary constants.
func newVocab() *vocab {
	return &vocab{
		host:     strings.Fields(hostWordsText),
		text:     strings.Fields(textWordsText),
		sections: strings.Fields(sectionWordsText),
		depts:    strings.Fields(deptWordsText),
		subs:     strings.Fields(subWordsText),
		tlds:     strings.Fields(oosTLDsText),
		bots:     strings.Fields(botNamesText),
		priv:     strings.Fields(privPrefixesText),
		docs:     strings.Fields(docWordsText),
		anchors:  strings.Split(genericAnchorsText, "|"),
	}
}
